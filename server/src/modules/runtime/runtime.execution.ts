/**
 * Run execution (docs/ARCHITECTURE.md, Worker runtime): the `runtime.run` job's work on
 * a claimed run. Run management (submit, cancel, retry, list, the crash rule) is runtime.service.ts.
 *
 *  1. claim the run (queued → running, atomic: a duplicate delivery does nothing) and prepare it: the project
 *     and worker as they are now, the key and budget (`gate`), the model plan, the context and the conversation;
 *  2. run the agent engine with the run's metered model call (the model gateway with the run as payer: every
 *     call reserved, recorded with source `worker` and `run_id`, a spent budget stops the run between turns) and
 *     the hooks that publish its events, beat its heartbeat, honour cancels and write its activity;
 *  3. finish: the reply, totals and timings in one transaction; the worker goes idle unless another run of its
 *     is live.
 * Cancels reach the instance executing a run through the bus (`run.cancel`): the model call under way is
 * aborted at once.
 *
 * Crash recovery (runtime.recovery.ts, journal.ts; docs/ARCHITECTURE.md, Crash recovery and instance leases): a
 * claim records this instance and the run's replay count; the run stores its journal after every step that must
 * not be repeated and resumes from it when requeued; a stopping instance hands its runs back; a run taken back
 * elsewhere is dropped here, never finished twice.
 */
import type { Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { Access, ProjectRef } from '../../access/access.ts';
import type { ActivityLog } from '../../lib/activity.ts';
import type { Bus } from '../../lib/bus.ts';
import { AppError } from '../../http/errors.ts';
import type { Billing, LlmMessage, ModelGateway } from '../models/model-gateway.ts';
import { projectPayer } from '../models/model-gateway.ts';
import { pickModelPlan } from '../models/model-tiers.ts';
import type { ProjectsRepo } from '../projects/projects.repo.ts';
import type { WorkersRepo } from '../workers/workers.repo.ts';
import { buildSystem } from './context.ts';
import { RunStop, type AgentEngine, type AgentRunResult, type ModelCaller } from './engine.ts';
import type { RunEvents } from './events.ts';
import type { AgentPorts } from './ports.ts';
import type { RunPatch, RunRow, RunStatus, RuntimeRepo } from './runtime.repo.ts';
import type { RunWorker, ToolContext, ToolRegistry } from './tools.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { Metrics } from '../../lib/metrics.ts';
import type { UsageService } from '../usage/usage.service.ts';
import { asJournal, type RunJournal } from './journal.ts';
import { createLocalRuns, createRunRecovery } from './runtime.recovery.ts';
import type { RunClaim } from './runtime.repo.ts';
import type { ApprovalsService } from './approvals.service.ts';
import { effectiveRules } from './approvals.rules.ts';

/** A run's heartbeat interval while it waits on a long model call (ms). */
export const HEARTBEAT_MS = 20_000;
/** Output-token bound per model call of a run. */
export const RUN_MAX_TOKENS = 4096;
/** Chat messages of earlier exchanges handed to the model. */
const HISTORY_MESSAGES = 20;

export interface RunExecutionDeps {
  /** Runs and chat messages. */
  repo: RuntimeRepo;
  /** The project a run acts in. */
  projects: Pick<ProjectsRepo, 'record'>;
  /** The workers runs are for, and their runtime state (working, idle, current skill). */
  workers: Pick<WorkersRepo, 'startWorking' | 'setCurrentSkill' | 'lockWorking' | 'setIdle'>;
  access: Pick<Access, 'projectDir'>;
  activity: ActivityLog;
  /** The metered model call, key resolution and budget checks. */
  models: Pick<ModelGateway, 'billing' | 'assertNotSpent' | 'complete'>;
  agentTools: ToolRegistry;
  /** The other areas as the agent's tools see them (built in the composition root). */
  ports: AgentPorts;
  agentEngine: AgentEngine;
  /** Events of runs, for the streams that follow them on any instance. */
  events: RunEvents;
  /** Cancels reach the instance executing the run (`run.cancel`). */
  bus: Pick<Bus, 'subscribe'>;
  /** Requeues of runs taken back (crash recovery). */
  jobs: Pick<JobQueue, 'start' | 'send' | 'complete'>;
  /** Charges the reservations of model calls cut by a crash or a stop (the usage area). */
  usage: Pick<UsageService, 'settleCrashed'>;
  /** Tool calls that wait for a person (approvals.service.ts). */
  approvals: Pick<ApprovalsService, 'gate' | 'pendingOfRun'>;
  /** This process's instance lease: runs record its id; recovery asks which instances are live. */
  instances: { id: string; states(ids: string[]): Promise<{ live: Set<string>; dead: Set<string> }> };
  /** Runs that end here are counted with their duration (docs/operations.md, Metrics). */
  metrics: Pick<Metrics, 'runEnded'>;
  log: { info(o: object, m: string): void; warn(o: object, m: string): void; error(o: object, m: string): void };
}

/** Who a budget event is about: the project, the worker, and the run when one was under way. */
interface BudgetSubject {
  project: Pick<ProjectRef, 'id' | 'owner_id'>;
  workerId: number;
  runId?: number;
  /** Who hit it: the worker's label during a run, `system` for a refused request. */
  actor: string;
}

const ms = (from: Date | number, to: Date | number = Date.now()) => Math.max(0, Math.round(+to - +from));

const isBudget = (err: unknown): err is AppError => err instanceof AppError && err.code === 'token_budget_exceeded';

/** Run execution (module header); built once by the runtime service, which hands it the claimed jobs. */
export function createRunExecution(deps: RunExecutionDeps) {
  const { repo } = deps;
  const instanceId = deps.instances.id;
  /** Abort controllers of the runs executing in this process. */
  const local = new Map<number, AbortController>();
  // A cancel asked on another instance stops the model call under way here at once, as it would there.
  deps.bus.subscribe('run.cancel', ({ run }) => local.get(run)?.abort());
  // Crash recovery: runs taken back from dead instances, handed back at a stop, dropped when taken over.
  const mine = createLocalRuns();
  const recovery = createRunRecovery({
    repo,
    jobs: deps.jobs,
    usage: deps.usage,
    activity: deps.activity,
    events: deps.events,
    instances: deps.instances,
    idle: (workerIds) => repo.transaction((tx) => idleUnlessBusy(tx, workerIds, ['running', 'queued'])),
    log: deps.log,
  });

  /**
   * After the engine returned (with `status`) or threw, whether the run was handed over instead of finished: a run
   * taken back elsewhere is left alone; a run of a stopping instance that the stop cut (`cancelled`, or thrown) is
   * handed back (runtime.recovery.ts), one that ended on its own is finished.
   */
  async function handedOver(runId: number, claim: RunClaim, status?: string): Promise<boolean> {
    const state = mine.state(runId);
    if (state === 'lost') {
      deps.log.warn({ run_id: runId }, 'run dropped here: it was taken back by another instance');
      return true;
    }
    if (state !== 'handing_back' || (status && status !== 'cancelled')) return false;
    await recovery.handBack(runId, claim);
    return true;
  }

  /** The `token_budget` event of a spent budget, with the figures of its 429. */
  async function budgetEvent(s: BudgetSubject, err: AppError): Promise<void> {
    const f = err.fields as { scope: string; used: number; cap: number };
    await deps.activity.recordBestEffort({
      type: 'token_budget',
      userId: s.project.owner_id,
      projectId: s.project.id,
      workerId: s.workerId,
      actor: s.actor,
      title: 'Token budget reached',
      detail: `${f.used} of ${f.cap} tokens (${f.scope})`,
      payload: { ...(s.runId !== undefined ? { run_id: s.runId } : {}), scope: f.scope, used: f.used, cap: f.cap },
    });
  }

  /**
   * Resolve the key a worker's runs call with and refuse when a budget they draw on is spent (writing the
   * `token_budget` event).
   * @returns the billing of the worker's calls.
   * @throws 400 `llm_key_required`, 503 `llm_unavailable`, 429 `token_budget_exceeded`.
   */
  async function gate(
    project: Pick<ProjectRef, 'id' | 'owner_id' | 'name' | 'trial_mode'>,
    workerId: number,
    subject: { runId?: number; actor?: string } = {},
  ): Promise<Billing> {
    const billing = await deps.models.billing(projectPayer(project, { workerId, runId: subject.runId ?? null }));
    try {
      await deps.models.assertNotSpent(billing);
    } catch (err) {
      if (isBudget(err))
        await budgetEvent({ project, workerId, runId: subject.runId, actor: subject.actor ?? 'system' }, err);
      throw err;
    }
    return billing;
  }

  /**
   * The working ones of `workerIds` (every working worker with `null`) go idle unless a run of theirs is in
   * one of `busy` states (`exceptRun` aside). Inside `tx`, under the workers' row locks: a run claimed
   * meanwhile marks its worker working only after this decision, so it stays working.
   */
  async function idleUnlessBusy(
    tx: Transaction<DB>,
    workerIds: number[] | null,
    busy: RunStatus[],
    exceptRun?: number,
  ): Promise<void> {
    const working = await deps.workers.lockWorking(tx, workerIds);
    if (!working.length) return;
    const taken = await repo.workersWithRuns(tx, working, busy, exceptRun);
    await deps.workers.setIdle(
      tx,
      working.filter((id) => !taken.has(id)),
    );
  }

  /**
   * Park a run that stopped before a tool call waiting for a person (docs/ARCHITECTURE.md, Approvals): status
   * `waiting_approval` with its turns and tool calls so far (its journal is stored; its queue job completes when
   * the handler returns). A decision made meanwhile (before the run was parked) requeues it at once instead: the
   * decision and this step both hold the run's row lock, so one of them requeues it.
   */
  async function park(
    run: { id: number; worker_id: number; claim: RunClaim },
    result: Pick<AgentRunResult, 'turns' | 'toolCalls' | 'model'>,
    patch: RunPatch = {},
  ): Promise<void> {
    await deps.jobs.start(); // not inside the transaction: starting the queue there would wait for its own lock
    const status = await repo.transaction(async (tx) => {
      const cur = await repo.lockRun(tx, run.id);
      if (cur.status !== 'running') return cur.status;
      if (cur.instance_id !== run.claim.instance_id || cur.replays !== run.claim.replays) return cur.status;
      const waiting = (await deps.approvals.pendingOfRun(tx, run.id)) > 0;
      await repo.updateRun(
        run.id,
        {
          ...patch,
          status: waiting ? 'waiting_approval' : 'queued',
          turns: result.turns,
          tool_calls: JSON.stringify(result.toolCalls),
          model: result.model,
          heartbeat_at: null,
        },
        tx,
      );
      if (!waiting) await deps.jobs.send('runtime.run', { run_id: run.id }, { tx });
      await idleUnlessBusy(tx, [run.worker_id], ['running'], run.id);
      return waiting ? 'waiting_approval' : 'queued';
    });
    deps.log.info({ run_id: run.id, worker_id: run.worker_id, status }, 'run waits for an approval');
    if (status === 'waiting_approval') deps.events.publish(run.id, { type: 'end', status });
  }

  /** Finish a run: store the reply, totals and timings; the worker goes idle when no other run is live. */
  async function finish(
    run: { id: number; project_id: number; user_id: number | null; worker_id: number; claim?: RunClaim },
    result: Pick<AgentRunResult, 'status' | 'text' | 'turns' | 'toolCalls' | 'error'> & { model?: string | null },
    extra: { prep_ms?: number | null; gen_ms?: number | null; patch?: RunPatch } = {},
  ) {
    let endedAfterMs: number | undefined;
    const status = await repo.transaction(async (tx) => {
      const cur = await repo.lockRun(tx, run.id);
      if (cur.status !== 'running') return cur.status;
      // Crash recovery: a run taken back meanwhile (another claim) is not this execution's to finish.
      if (run.claim && (cur.instance_id !== run.claim.instance_id || cur.replays !== run.claim.replays))
        return cur.status;
      endedAfterMs = ms(cur.created_at);
      let replyId: number | null = null;
      if (result.text.trim()) {
        replyId = await repo.insertMessage(tx, {
          projectId: run.project_id,
          userId: run.user_id,
          workerId: run.worker_id,
          recipients: [run.worker_id],
          role: 'assistant',
          content: result.text,
          runId: run.id,
        });
      }
      await repo.updateRun(
        run.id,
        {
          ...extra.patch,
          status: result.status,
          turns: result.turns,
          tool_calls: JSON.stringify(result.toolCalls),
          error: result.error?.code ?? null,
          error_message: result.error?.message ?? null,
          reply_message_id: replyId,
          ...(result.model ? { model: result.model } : {}),
          finished_at: new Date(),
          prep_ms: extra.prep_ms ?? null,
          gen_ms: extra.gen_ms ?? null,
          total_ms: endedAfterMs,
        },
        tx,
      );
      await idleUnlessBusy(tx, [run.worker_id], ['running'], run.id);
      return result.status;
    });
    deps.log.info(
      { run_id: run.id, worker_id: run.worker_id, status, turns: result.turns, error: result.error?.code ?? null },
      result.error ? `run ended: ${result.error.message}` : 'run ended',
    );
    if (endedAfterMs !== undefined) deps.metrics.runEnded(status, endedAfterMs / 1000);
    deps.events.publish(run.id, { type: 'end', status });
  }

  /** Conversation of a worker from its rows newest first (user messages to it and its replies), oldest first. */
  function history(rows: Array<{ role: 'user' | 'assistant'; content: string }>): LlmMessage[] {
    const out: LlmMessage[] = [];
    for (const r of rows.reverse()) {
      const last = out[out.length - 1];
      if (last && last.role === r.role) last.content = `${last.content as string}\n\n${r.content}`;
      else out.push({ role: r.role, content: r.content });
    }
    while (out.length && out[0].role !== 'user') out.shift();
    return out;
  }

  /**
   * The project, worker, message and earlier conversation of a claimed run as they are now; undefined when one is
   * gone. Read once per run and passed down (the run's own reads during its turns are its row's). The worker is
   * marked working by the same statement that reads it (`startWorking`).
   */
  async function prepare(claimed: RunRow) {
    const w = await deps.workers.startWorking(claimed.project_id, claimed.worker_id);
    const p = await deps.projects.record(claimed.project_id);
    const { content, history: rows } = await repo.messageWithConversation(
      claimed.project_id,
      claimed.worker_id,
      claimed.message_id,
      HISTORY_MESSAGES,
    );
    if (!p || !w || content === undefined) return undefined;
    const project: ProjectRef & { protocol: string } = {
      id: p.id,
      owner_id: p.owner_id,
      name: p.name,
      display_name: p.display_name,
      trial_mode: p.trial_mode,
      config: (p.config ?? {}) as Record<string, unknown>,
      protocol: p.protocol,
      dir: deps.access.projectDir(p.id),
    };
    const list = (v: unknown): string[] => (Array.isArray(v) ? v : []);
    const worker: RunWorker & {
      system_prompt: string;
      context_assets: string[];
      model: string | null;
      max_turns: number;
      approvals: unknown;
      mcp_servers: string[];
    } = {
      id: w.id,
      label: w.label,
      role: w.role,
      focus_dirs: list(w.focus_dirs),
      tools: list(w.tools),
      system_prompt: w.system_prompt,
      context_assets: list(w.context_assets),
      model: w.model,
      max_turns: w.max_turns,
      approvals: w.approvals,
      mcp_servers: list(w.mcp_servers),
    };
    return { project, worker, content, conversation: history(rows) };
  }

  /** The job handler: execute run `runId` if it is still queued (atomic claim). Never throws for run failures. */
  async function execute(runId: number, jobId?: string): Promise<void> {
    // Crash recovery: a stopping instance starts no run (its job is retried on another instance).
    if (mine.closing) throw new Error('this instance is stopping');
    const claimed = await repo.claim(runId, instanceId, jobId);
    if (!claimed) return;
    const started = Date.now();
    const claim: RunClaim = { instance_id: instanceId, replays: claimed.replays };
    const resume = asJournal(claimed.journal);
    const run = {
      id: claimed.id,
      project_id: claimed.project_id,
      user_id: claimed.user_id,
      worker_id: claimed.worker_id,
      claim,
    };
    deps.log.info(
      { run_id: runId, worker_id: claimed.worker_id, replay: claimed.replays, resumed_turns: resume?.turns ?? null },
      resume ? 'run resumed' : 'run started',
    );
    /**
     * Columns of the run row not stored yet (its model plan, its totals after a model call): they go with the run
     * row's next write (a turn's start, a journal, the end) instead of a write of their own.
     */
    let patch: RunPatch = {};
    const takePatch = (): RunPatch => {
      const p = patch;
      patch = {};
      return p;
    };
    const fail = (code: string, message: string) =>
      finish(
        run,
        { status: 'failed', text: '', turns: 0, toolCalls: [], error: { code, message } },
        { patch: takePatch() },
      );
    const ac = new AbortController();
    local.set(runId, ac);
    mine.add(runId, ac);
    const beat = setInterval(() => {
      repo.heartbeat(runId).catch(() => {});
    }, HEARTBEAT_MS);
    beat.unref();
    try {
      const prepared = await prepare(claimed);
      if (!prepared) return await fail('worker_not_found', 'The worker or its message no longer exists.');
      const { project, worker, content, conversation } = prepared;
      const act = (type: string, title: string, detail?: string | null, payload: Record<string, unknown> = {}) =>
        deps.activity.recordBestEffort({
          type,
          userId: project.owner_id,
          actor: worker.label,
          projectId: project.id,
          workerId: worker.id,
          title,
          detail: detail ?? null,
          payload: { run_id: runId, ...payload },
        });
      let billing: Billing;
      try {
        billing = await gate(project, worker.id, { runId, actor: worker.label });
      } catch (err) {
        // No key, or a spent budget: the run never started working.
        if (!(err instanceof AppError)) throw err;
        return await fail(err.code, err.message);
      }
      const plan = pickModelPlan({
        messageModel: claimed.requested_model,
        modelMode: project.config.modelMode,
        workerModel: worker.model,
        role: worker.role,
      });
      // Stored with the first turn's start (or the run's end when it fails before).
      patch = { model: plan.models[0], cascade: plan.cascade };
      if (plan.reason === 'optimize')
        await act('cascade_applied', `Cascade from ${plan.tier}`, plan.models[0], {
          tier: plan.tier,
          model: plan.models[0],
          role: worker.role,
        });

      const ports = deps.ports;
      // The registry's tools and the run's own (a worker's outside MCP servers), closed when the run ends.
      const runTools = await deps.agentTools.forRun(worker.tools, ports, {
        projectId: project.id,
        workerId: worker.id,
        signal: ac.signal,
        mcpServers: worker.mcp_servers,
      });
      const tools = runTools.tools;
      const { system } = await buildSystem({
        project,
        worker,
        skills: ports.skills,
        toolNames: tools.map((t) => t.name),
      });
      const messages: LlmMessage[] = conversation;
      const last = messages[messages.length - 1];
      if (last && last.role === 'user')
        messages[messages.length - 1] = { role: 'user', content: `${last.content as string}\n\n${content}` };
      else messages.push({ role: 'user', content });
      const ctx: ToolContext = {
        project,
        worker,
        runId,
        userId: project.owner_id,
        ports,
        activity: act,
        setCurrentSkill: (skill) => deps.workers.setCurrentSkill(worker.id, skill),
        signal: ac.signal,
      };
      // A resumed run (after a crash or an approval) goes on from its stored totals.
      const totals = {
        input_tokens: claimed.input_tokens,
        output_tokens: claimed.output_tokens,
        cache_tokens: claimed.cache_tokens,
        total_tokens: claimed.total_tokens,
      };
      const approvalRules = effectiveRules(worker.approvals, project.config);
      const approvalRun = {
        projectId: project.id,
        ownerId: project.owner_id,
        runId,
        workerId: worker.id,
        actor: worker.label,
      };
      /**
       * `session_start` ("… started working") is written once, when the first model call has its budget and is
       * about to be made: a run that fails before (no key, spent budget, cancelled while queued) never started.
       */
      let sessionStarted = false;
      /** The run's metered model call: the gateway with this run as payer; a spent budget stops the run. */
      const call: ModelCaller = async (req, onText) => {
        try {
          const answer = await deps.models.complete(billing, {
            purpose: 'worker',
            ...req,
            onText,
            // Crash recovery: a call cut by a stop handing the run back was billed by the provider; charge it.
            chargeIfCut: () => mine.state(runId) !== 'running',
            async onReserved() {
              if (sessionStarted) return;
              sessionStarted = true;
              await act('session_start', `${worker.label} started working`, content.slice(0, 280));
            },
          });
          const u = answer.usage;
          totals.input_tokens += u.input_tokens;
          totals.output_tokens += u.output_tokens;
          totals.cache_tokens += u.cache_tokens;
          totals.total_tokens += u.input_tokens + u.output_tokens + u.cache_tokens;
          // Stored with the run row's next write: the answer's journal (before its tools), the next turn's start or
          // the run's end, all right after this call. A call whose answer is never stored (a crash first) is made
          // again when the run resumes; its usage row counts it, the run's totals count the one kept.
          patch = { ...patch, ...totals, model: answer.model };
          return answer.response;
        } catch (err) {
          if (!isBudget(err)) throw err;
          // Stop between turns: what the run did so far is kept.
          await budgetEvent({ project, workerId: worker.id, runId, actor: worker.label }, err);
          throw new RunStop('token_budget_exceeded', err.message);
        }
      };
      /**
       * The journal of a turn whose tools are done (no `pending`), not stored yet: the next thing the engine does is
       * the next turn's `beforeTurn`, which stores it with its heartbeat in one statement, or end the run, after which
       * it is stored on its own. Nothing runs in between, so a crash finds the same state as with two writes.
       */
      let unsaved: RunJournal | undefined;
      /**
       * The first turn of a run without a journal follows its claim by the few reads of `prepare`: the claim beat its
       * heartbeat and found it queued (a queued run is cancelled in its row, never claimed), and a cancel asked since
       * reaches `ac` (`local`, set right after the claim). So that turn writes nothing before its model call: its
       * patch (the model plan) goes with the run row's next write, the answer's journal or the end. One statement
       * fewer on every run's first turn, for the price of a cancel flag set in that moment and whose `run.cancel` was
       * lost being seen one turn later (at the next turn's write, as every flag is).
       */
      let claimedJustNow = !resume;
      /** Store `journal` under this run's claim; a claim taken back stops the run. */
      const store = async (journal: RunJournal) => {
        if (!(await repo.saveJournal(runId, claim, journal, takePatch()))) {
          mine.lose(runId);
          throw new RunStop('cancelled', 'The run was taken back by another instance.');
        }
      };
      const prepMs = ms(started);
      const genStart = Date.now();
      const result = await deps.agentEngine
        .run(
          {
            system,
            messages,
            tools,
            toolContext: ctx,
            models: plan.models,
            cascade: plan.cascade,
            maxTurns: Math.max(1, worker.max_turns),
            maxTokens: RUN_MAX_TOKENS,
            call,
            signal: ac.signal,
            resume,
          },
          {
            onText: (delta) => deps.events.publish(runId, { type: 'text_delta', delta }),
            onToolResult: (e) =>
              deps.events.publish(runId, {
                type: 'tool_result',
                tool: e.tool,
                is_error: e.is_error,
                ...(e.data ?? {}),
              }),
            async beforeTurn(turn) {
              deps.log.info({ run_id: runId, turn }, 'run turn');
              const journal = unsaved;
              unsaved = undefined;
              if (journal) {
                // The last turn's results with this turn's heartbeat (its turns are the journal's: `turn - 1`).
                const row = await repo.beginTurnWithJournal(runId, claim, journal, takePatch());
                if (!row) {
                  mine.lose(runId);
                  throw new RunStop('cancelled', 'The run was taken back by another instance.');
                }
                if (row.cancel_requested) throw new RunStop('cancelled', 'The run was cancelled.');
                return;
              }
              if (claimedJustNow) {
                claimedJustNow = false;
                return;
              }
              const row = await repo.beginTurn(runId, turn - 1, takePatch());
              if (!row || row.cancel_requested) throw new RunStop('cancelled', 'The run was cancelled.');
            },
            async onEscalate(e) {
              deps.events.publish(runId, { type: 'cascade_escalated', class: e.class, from: e.from, to: e.to });
              await act('cascade_escalated', `Escalated to ${e.to}`, e.class, {
                class: e.class,
                from_model: e.from,
                to_model: e.to,
                turn: e.turn,
              });
            },
            // Approvals: only the approvals table decides; nothing the model or a tool wrote is read here.
            approval: approvalRules.length
              ? (use) => deps.approvals.gate(approvalRun, approvalRules, use, totals.total_tokens)
              : undefined,
            // Crash recovery: the journal is stored under this claim; a claim taken back stops the run here.
            // A turn's results (no `pending`) wait for the next `beforeTurn` (`unsaved`).
            async checkpoint(journal) {
              unsaved = journal.pending ? undefined : journal;
              if (journal.pending) await store(journal);
            },
          },
        )
        .finally(() => runTools.close());
      if (unsaved) {
        // The run ended right after a turn's tools (max_turns): its results are stored as they were before.
        const journal = unsaved;
        unsaved = undefined;
        await store(journal).catch((err) => {
          if (!(err instanceof RunStop)) throw err;
        });
      }
      if (await handedOver(runId, claim, result.status)) return;
      if (result.status === 'waiting_approval') return await park(run, result, takePatch());
      await finish(run, { ...result }, { prep_ms: prepMs, gen_ms: ms(genStart), patch: takePatch() });
    } catch (err) {
      if (await handedOver(runId, claim).catch(() => true)) return;
      deps.log.error({ err: (err as Error).message, run_id: runId }, 'agent run failed unexpectedly');
      await fail('internal_error', 'The run failed on our side; retry it.').catch(() => {});
    } finally {
      clearInterval(beat);
      local.delete(runId);
      mine.remove(runId);
    }
  }

  return {
    /** This process's id, stored on the runs it claims. */
    instanceId,
    /** The engine runs are stored with (`agent_runs.engine`). */
    engine: deps.agentEngine.name,
    execute,
    gate,
    idleUnlessBusy,
    /** Whether run `runId` executes in this process. */
    isLocal: (runId: number): boolean => local.has(runId),
    /** Abort run `runId` when it executes here. @returns whether it did. */
    abort(runId: number): boolean {
      const ac = local.get(runId);
      ac?.abort();
      return !!ac;
    },
    /** Abort every run executing in this process (shutdown). */
    abortAll(): void {
      for (const ac of local.values()) ac.abort();
    },
    /** Crash recovery: requeue or fail the runs of dead or unknown instances. @returns the run ids of each. */
    recoverOrphans: () => recovery.recoverOrphans(),
    /** Crash recovery: this instance's lease was lost; its runs were taken back elsewhere, so drop them here. */
    loseAll(): void {
      mine.loseAll();
    },
    /** Stop taking runs and hand the runs executing here back, waiting until each is handed back. */
    handBackAll: (): Promise<void> => mine.handBackAll(),
  };
}

export type RunExecution = ReturnType<typeof createRunExecution>;
