/**
 * The worker runtime (specification: Chat, messages, pins; Worker runtime status; Usage row; Limits,
 * Worker): messages become agent runs that execute as durable jobs; every model call is metered; daily
 * and trial budgets stop new runs; runs can be cancelled, retried, restarted and reconciled after a crash.
 *
 * Durability: `submit` stores the user's message, one run row per worker and their jobs in ONE
 * transaction. The job handler claims its run atomically (queued → running), so a duplicate delivery
 * does nothing. A running run beats a heartbeat (each turn and every HEARTBEAT_MS). Crash rule, applied
 * at start and every SWEEP_MS: a running run whose heartbeat is older than STALE_RUN_MS is requeued when
 * it had not finished a turn (nothing the model did can have taken effect), else marked failed
 * `interrupted` (tools may have acted; the user retries it explicitly).
 */
import crypto from 'node:crypto';
import type { Static } from 'typebox';
import type { Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { Actor } from '../../http/auth.ts';
import type { Access, ProjectRef } from '../../access/access.ts';
import type { ActivityLog } from '../../lib/activity.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { AppError, BadRequest, Conflict, NotFound, Upstream } from '../../http/errors.ts';
import { llmFailure } from '../../http/llm-errors.ts';
import { textOf, type LlmMessage, type LlmProvider, type LlmResponse } from '../../providers/llm/index.ts';
import type { LlmKeys, ResolvedKey } from '../accounts/llm-keys.ts';
import type { UsageService } from '../usage/usage.service.ts';
import type { KeySource } from '../usage/usage.repo.ts';
import { estimatePromptTokens } from '../usage/plans.ts';
import type { AgentPorts } from './ports.ts';
import type { RunWorker, ToolContext, ToolRegistry } from './tools.ts';
import { RunStop, type AgentEngine, type AgentRunResult } from './engine.ts';
import type { RunEvents } from './events.ts';
import type { Bus } from '../../lib/bus.ts';
import { MODEL_TIERS, pickModelPlan } from './model-tiers.ts';
import { buildSystem } from './context.ts';
import { STALE_RUN_MS } from './status.ts';
import type { RunRow, RunStatus, RuntimeRepo } from './runtime.repo.ts';
import type { ProjectsRepo } from '../projects/projects.repo.ts';
import type { WorkersRepo } from '../workers/workers.repo.ts';
import type * as S from './runtime.schemas.ts';

/** A run's heartbeat interval while it waits on a long model call (ms). */
export const HEARTBEAT_MS = 20_000;
/** How often the crash sweep runs (ms). */
export const SWEEP_MS = 60_000;
/** Output-token bound per model call of a run. */
export const RUN_MAX_TOKENS = 4096;
/** Output-token bound of a prompt generation. */
const PROMPT_MAX_TOKENS = 1500;
/** Chat messages of earlier exchanges handed to the model. */
const HISTORY_MESSAGES = 20;

export interface RuntimeDeps {
  /** Runs and chat messages. */
  repo: RuntimeRepo;
  /** The project a run acts in. */
  projects: Pick<ProjectsRepo, 'record'>;
  /** The workers runs are for, and their runtime state (working, idle, current skill). */
  workers: Pick<WorkersRepo, 'pick' | 'ids' | 'full' | 'markWorking' | 'setCurrentSkill' | 'lockWorking' | 'setIdle'>;
  access: Access;
  activity: ActivityLog;
  jobs: JobQueue;
  llm: LlmProvider;
  llmKeys: LlmKeys;
  /** Budgets and metering (the usage area). */
  usage: Pick<UsageService, 'assertNotSpent' | 'reserve' | 'record' | 'release' | 'purgeExpired'>;
  agentTools: ToolRegistry;
  /** The other areas as the agent's tools see them (built in the composition root). */
  ports: AgentPorts;
  agentEngine: AgentEngine;
  /** Events of runs, for the streams that follow them on any instance. */
  events: RunEvents;
  /** Cancels reach the instance executing the run (`run.cancel`). */
  bus: Pick<Bus, 'publish' | 'subscribe'>;
  /**
   * The project owner's cloud container: a message (web or messenger, both come through `submit`) resumes it
   * first when paused (a no-op without one).
   */
  containers?: { resumeUser(userId: number): Promise<void> };
  log: { warn(o: object, m: string): void; error(o: object, m: string): void };
}

export interface SubmitBody {
  worker_id?: number;
  worker_ids?: number[];
  text: string;
  model?: string;
}

/** A run as the API shows it (`GET /projects/:name/runs/:id`; the `Run` response schema). */
export type RunView = Static<typeof S.Run>;

/**
 * The request text of a prompt generation: the project, the worker's name, what it is for (`role`) and the
 * further description when given.
 */
function promptRequest(projectName: string, body: { role: string; label?: string; description?: string }): string {
  const lines = [
    `Project: ${projectName}`,
    `Worker: ${body.label?.trim() || '(unnamed)'}`,
    `What the worker is for: ${body.role.trim()}`,
  ];
  if (body.description?.trim()) lines.push(`Description:\n${body.description.trim()}`);
  return lines.join('\n');
}

const ms = (from: Date | number, to: Date | number = Date.now()) => Math.max(0, Math.round(+to - +from));

/** The worker runtime (module header); built once by the composition root, started by its lifecycle. */
export function createRuntimeService(deps: RuntimeDeps) {
  const { repo } = deps;
  const instanceId = crypto.randomUUID();
  /** Abort controllers of the runs executing in this process. */
  const local = new Map<number, AbortController>();
  let sweep: NodeJS.Timeout | undefined;
  // A cancel asked on another instance stops the model call under way here at once, as it would there.
  deps.bus.subscribe('run.cancel', ({ run }) => local.get(run)?.abort());

  const toView = (r: RunRow, reply: string | null): RunView => ({
    id: r.id,
    worker_id: r.worker_id,
    message_id: r.message_id,
    status: r.status,
    model: r.model,
    requested_model: r.requested_model,
    cascade: r.cascade,
    turns: r.turns,
    tool_calls: r.tool_calls ?? [],
    error: r.error,
    error_message: r.error_message,
    reply_message_id: r.reply_message_id,
    reply,
    usage: {
      input_tokens: r.input_tokens,
      output_tokens: r.output_tokens,
      cache_tokens: r.cache_tokens,
      total_tokens: r.total_tokens,
    },
    timings: { queue_ms: r.queue_ms, prep_ms: r.prep_ms, gen_ms: r.gen_ms, total_ms: r.total_ms },
    retry_of: r.retry_of,
    created_at: r.created_at,
    started_at: r.started_at,
    finished_at: r.finished_at,
  });

  async function loadRun(project: ProjectRef, runId: number): Promise<RunView> {
    const r = await repo.run(project.id, runId);
    if (!r) throw new NotFound(`Run ${runId} was not found in this project.`, 'run_not_found');
    const reply = r.reply_message_id ? ((await repo.messageContent(r.reply_message_id)) ?? null) : null;
    return toView(r, reply);
  }

  async function projectWorkers(project: ProjectRef, ids: number[]) {
    const rows = await deps.workers.pick(project.id, ids);
    for (const id of ids)
      if (!rows.some((r) => r.id === id))
        throw new NotFound(`Worker ${id} was not found in this project.`, 'worker_not_found');
    return rows;
  }

  /** The key a project's runs call with (trial projects may use the platform key). */
  const keyFor = (project: { owner_id: number; trial_mode: boolean }) =>
    deps.llmKeys.forUser(project.owner_id, { allowPlatform: project.trial_mode });

  /** Which key source a project's calls draw on: the trial when a trial project uses the platform key. */
  const keySource = (project: { trial_mode: boolean }, key: ResolvedKey): KeySource =>
    key.source === 'own' ? 'own' : project.trial_mode ? 'trial' : 'platform';

  /** Refuse when a worker's budget is spent, writing a `token_budget` event. @throws 429 `token_budget_exceeded`. */
  async function ensureBudget(project: ProjectRef, workerId: number, key: ResolvedKey) {
    try {
      await deps.usage.assertNotSpent({
        userId: project.owner_id,
        projectId: project.id,
        workerId,
        keySource: keySource(project, key),
      });
    } catch (err) {
      if (err instanceof AppError && err.code === 'token_budget_exceeded') {
        const f = err.fields as { scope: string; used: number; cap: number };
        await deps.activity.recordBestEffort({
          type: 'token_budget',
          userId: project.owner_id,
          projectId: project.id,
          workerId,
          actor: 'system',
          title: 'Token budget reached',
          detail: `${f.used} of ${f.cap} tokens (${f.scope})`,
          payload: { scope: f.scope, used: f.used, cap: f.cap },
        });
      }
      throw err;
    }
  }

  /** Store runs for `workerIds` answering `messageId` and send their jobs, inside `tx`. */
  async function enqueueRuns(
    tx: Transaction<DB>,
    project: ProjectRef,
    userId: number,
    messageId: number,
    workerIds: number[],
    model: string | null,
    retryOf: number | null,
  ) {
    const runIds: number[] = [];
    for (const workerId of workerIds) {
      const runId = await repo.insertRun(tx, {
        projectId: project.id,
        userId,
        workerId,
        messageId,
        requestedModel: model,
        retryOf,
        engine: deps.agentEngine.name,
      });
      await deps.jobs.send('runtime.run', { run_id: runId }, { tx });
      runIds.push(runId);
    }
    return runIds;
  }

  /** Finish a run: store the reply, totals and timings; the worker goes idle when no other run is live. */
  async function finish(
    run: { id: number; project_id: number; user_id: number | null; worker_id: number },
    result: Pick<AgentRunResult, 'status' | 'text' | 'turns' | 'toolCalls' | 'error'> & { model?: string | null },
    extra: { prep_ms?: number | null; gen_ms?: number | null } = {},
  ) {
    const status = await repo.transaction(async (tx) => {
      const cur = await repo.lockRun(tx, run.id);
      if (cur.status !== 'running') return cur.status;
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
          total_ms: ms(cur.created_at),
        },
        tx,
      );
      await idleUnlessBusy(tx, [run.worker_id], ['running'], run.id);
      return result.status;
    });
    deps.events.publish(run.id, { type: 'end', status });
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

  /** Conversation of a worker before `messageId` (user messages to it and its replies), oldest first. */
  async function history(projectId: number, workerId: number, messageId: number): Promise<LlmMessage[]> {
    const rows = await repo.conversation(projectId, workerId, messageId, HISTORY_MESSAGES);
    const out: LlmMessage[] = [];
    for (const r of rows.reverse()) {
      const last = out[out.length - 1];
      if (last && last.role === r.role) last.content = `${last.content as string}\n\n${r.content}`;
      else out.push({ role: r.role, content: r.content });
    }
    while (out.length && out[0].role !== 'user') out.shift();
    return out;
  }

  const service = {
    instanceId,
    /** In-process events of the runs executing here (streams subscribe). */
    events: deps.events,

    /**
     * `POST /projects/:name/message`: send `text` to one worker (`worker_id`) or several in parallel
     * (`worker_ids`), with an optional `model`; answers 202 `{message_id, run_ids}`.
     * A stopped (idle) worker starts automatically: its run is queued at once. Records `browser_chat_message`.
     * @param opts.beforeCommit called with the run ids and the transaction before it commits (streams subscribe
     *   there; the messenger records the update it answers in the same transaction, and throws to roll back).
     * @param opts.eventType the activity event of the message (`browser_chat_message` by default;
     *   `messenger_message` for a message that came through a worker's bot).
     * @returns `{message_id, run_ids}` (202).
     * @throws 400 `invalid_request` (no worker), 404 `worker_not_found`, 400 `llm_key_required`,
     *   503 `llm_unavailable`, 429 `token_budget_exceeded`.
     */
    async submit(
      actor: Actor,
      name: string,
      body: SubmitBody,
      opts: {
        beforeCommit?: (runIds: number[], tx: Transaction<DB>) => void | Promise<void>;
        eventType?: 'browser_chat_message' | 'messenger_message';
      } = {},
    ) {
      const project = await deps.access.project(actor, name);
      await deps.containers?.resumeUser(project.owner_id).catch((err: Error) => {
        deps.log.warn({ err: err.message, user: project.owner_id }, 'cloud container not resumed');
      });
      const ids = [...new Set(body.worker_ids ?? (body.worker_id !== undefined ? [body.worker_id] : []))];
      if (!ids.length)
        throw new BadRequest('invalid_request', 'Name the worker with worker_id, or several with worker_ids.');
      if (body.worker_ids && body.worker_id !== undefined)
        throw new BadRequest('invalid_request', 'Give worker_id or worker_ids, not both.');
      const workers = await projectWorkers(project, ids);
      const key = await keyFor(project);
      for (const id of ids) await ensureBudget(project, id, key);
      await deps.jobs.start();
      return repo.transaction(async (tx) => {
        const messageId = await repo.insertMessage(tx, {
          projectId: project.id,
          userId: actor.id,
          workerId: ids.length === 1 ? ids[0] : null,
          recipients: ids,
          role: 'user',
          content: body.text,
        });
        const runIds = await enqueueRuns(tx, project, actor.id, messageId, ids, body.model ?? null, null);
        await deps.activity.record(
          {
            type: opts.eventType ?? 'browser_chat_message',
            userId: actor.id,
            actor: actor.email,
            projectId: project.id,
            workerId: ids.length === 1 ? ids[0] : null,
            title: `Message to ${workers.map((w) => w.label).join(', ')}`,
            detail: body.text.slice(0, 280),
            payload: { message_id: messageId, run_ids: runIds, worker_ids: ids },
          },
          tx,
        );
        await opts.beforeCommit?.(runIds, tx);
        return { message_id: messageId, run_ids: runIds };
      });
    },

    /** `GET /projects/:name/runs/:id`. @throws 404 `run_not_found`. */
    async getRun(actor: Actor, name: string, runId: number): Promise<RunView> {
      const project = await deps.access.project(actor, name);
      return loadRun(project, runId);
    },

    /**
     * `POST /projects/:name/runs/:id/cancel`: a queued run is cancelled at once; a running one is asked to
     * stop (its model call is aborted when it runs here; elsewhere it stops before its next turn).
     * @throws 404 `run_not_found`; 409 `run_not_active` when it already ended.
     */
    async cancel(actor: Actor, name: string, runId: number): Promise<RunView> {
      const project = await deps.access.project(actor, name);
      const run = await loadRun(project, runId);
      if (run.status !== 'queued' && run.status !== 'running')
        throw new Conflict('run_not_active', `Run ${runId} already ended (${run.status}).`, { status: run.status });
      await stopRun(runId, run.worker_id);
      return loadRun(project, runId);
    },

    /**
     * `POST /projects/:name/runs/:id/retry`: run a failed or cancelled run's message again as a new run.
     * @returns `{run_id, retry_of}` (202). @throws 404; 409 `run_not_retryable`; 429 budget; 400/503 key.
     */
    async retry(actor: Actor, name: string, runId: number) {
      const project = await deps.access.project(actor, name);
      const run = await loadRun(project, runId);
      if (run.status !== 'failed' && run.status !== 'cancelled')
        throw new Conflict(
          'run_not_retryable',
          `Only a failed or cancelled run can be retried; run ${runId} is ${run.status}.`,
          { status: run.status },
        );
      await ensureBudget(project, run.worker_id, await keyFor(project));
      await deps.jobs.start();
      const [id] = await repo.transaction((tx) =>
        enqueueRuns(tx, project, actor.id, run.message_id, [run.worker_id], run.requested_model, run.id),
      );
      return { run_id: id, retry_of: run.id };
    },

    /**
     * `GET /projects/:name/runs`: the project's runs, newest first, paged by id (`limit` default 50, at most
     * 200; `before` a run id), optionally of one worker and in one state.
     * @returns `{runs, next_before}`: `next_before` is the id to pass as `before` for the next page, null on the
     *   last one. @throws 404 `worker_not_found` when `worker_id` is not a worker of the project.
     */
    async listRuns(
      actor: Actor,
      name: string,
      q: { limit?: number; before?: number; worker_id?: number; status?: RunStatus },
    ): Promise<{ runs: RunView[]; next_before: number | null }> {
      const project = await deps.access.project(actor, name);
      if (q.worker_id !== undefined) await projectWorkers(project, [q.worker_id]);
      const limit = Math.min(Math.max(q.limit ?? 50, 1), 200);
      const rows = await repo.listRuns(project.id, {
        limit: limit + 1,
        before: q.before,
        workerId: q.worker_id,
        status: q.status,
      });
      const page = rows.slice(0, limit);
      return {
        runs: page.map((r) => toView(r, r.reply)),
        next_before: rows.length > limit ? page[page.length - 1].id : null,
      };
    },

    /**
     * `POST /projects/:name/restart?worker_id=`: stop the worker's queued and running runs cleanly (all
     * workers' when no id is given) and leave it idle. A run whose process is gone is marked failed.
     * @returns `{ok, worker_ids, cancelled}`. @throws 404 `worker_not_found`.
     */
    async restart(actor: Actor, name: string, workerId?: number) {
      const project = await deps.access.project(actor, name);
      const ids =
        workerId !== undefined
          ? (await projectWorkers(project, [workerId])).map((w) => w.id)
          : await deps.workers.ids(project.id);
      if (!ids.length) return { ok: true, worker_ids: [], cancelled: [] };
      const live = await repo.liveRuns(ids);
      for (const r of live) await stopRun(r.id, r.worker_id);
      await repo.transaction((tx) => idleUnlessBusy(tx, ids, ['running']));
      return { ok: true, worker_ids: ids, cancelled: live.map((r) => r.id) };
    },

    /**
     * `POST /projects/:name/workers/generate-prompt` `{role, label?, description?, model?}`: write a worker's
     * system prompt with the LLM from what the worker is for (`role`), its name and the further description
     * (metered, source `generate_prompt`).
     * @returns `{system_prompt, model, usage}`. @throws 400 `llm_key_required`, 503 `llm_unavailable`, 502 `llm_error`.
     */
    async generatePrompt(
      actor: Actor,
      name: string,
      body: { role: string; label?: string; description?: string; model?: string },
    ) {
      const project = await deps.access.project(actor, name);
      const key = await keyFor(project);
      const model = body.model ?? pickModelPlan({ modelMode: 'strict' }).models[0];
      const system =
        'You write system prompts for AI workers of a software team. Given what the worker is for and a description, answer with the system prompt only: who the worker is, what it is responsible for, how it works with issues (take, log progress, close), its boundaries, and its tone. Follow the description where it says more. Second person, under 400 words, no preamble.';
      const content = promptRequest(project.display_name, body);
      const source = keySource(project, key);
      const scope = { userId: project.owner_id, projectId: project.id, workerId: null, keySource: source };
      const grant = await deps.usage.reserve(scope, {
        promptTokens: estimatePromptTokens({ text: system + content, messages: 1 }),
        maxTokens: PROMPT_MAX_TOKENS,
      });
      let res: LlmResponse;
      try {
        res = await deps.llm.complete({
          model,
          apiKey: key.key,
          maxTokens: grant.maxTokens,
          temperature: 0.3,
          system,
          messages: [{ role: 'user', content }],
        });
      } catch (err) {
        if (grant.id !== null) await deps.usage.release(grant.id);
        throw llmFailure(err, 'The model provider could not write the prompt; try again.');
      }
      const u = res.usage;
      const total = u.input_tokens + u.output_tokens + u.cache_tokens;
      await deps.usage.record({
        userId: project.owner_id,
        projectId: project.id,
        projectName: project.name,
        model: res.model || model,
        source: 'generate_prompt',
        keySource: source,
        usage: u,
        reservationId: grant.id,
      });
      const prompt = textOf(res).trim();
      if (!prompt) throw new Upstream(502, 'llm_error', 'The model gave an empty answer; try again.');
      return {
        system_prompt: prompt,
        model: res.model || model,
        usage: { input_tokens: u.input_tokens, output_tokens: u.output_tokens, total_tokens: total },
      };
    },

    /** The job handler: execute run `runId` if it is still queued (atomic claim). Never throws for run failures. */
    async execute(runId: number) {
      const claimed = await repo.claim(runId, instanceId);
      if (!claimed) return;
      const started = Date.now();
      const run = {
        id: claimed.id,
        project_id: claimed.project_id,
        user_id: claimed.user_id,
        worker_id: claimed.worker_id,
      };
      const fail = (code: string, message: string) =>
        finish(run, { status: 'failed', text: '', turns: 0, toolCalls: [], error: { code, message } });
      const ac = new AbortController();
      local.set(runId, ac);
      const beat = setInterval(() => {
        repo.heartbeat(runId).catch(() => {});
      }, HEARTBEAT_MS);
      beat.unref();
      try {
        await deps.workers.markWorking(claimed.worker_id);
        const p = await deps.projects.record(claimed.project_id);
        const w = await deps.workers.full(claimed.project_id, claimed.worker_id);
        const content = await repo.messageContent(claimed.message_id);
        if (!p || !w || content === undefined)
          return await fail('worker_not_found', 'The worker or its message no longer exists.');
        const msg = { content };
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
        const worker: RunWorker & {
          system_prompt: string;
          context_assets: string[];
          model: string | null;
          max_turns: number;
        } = {
          id: w.id,
          label: w.label,
          role: w.role,
          focus_dirs: Array.isArray(w.focus_dirs) ? w.focus_dirs : [],
          tools: Array.isArray(w.tools) ? w.tools : [],
          system_prompt: w.system_prompt,
          context_assets: Array.isArray(w.context_assets) ? w.context_assets : [],
          model: w.model,
          max_turns: w.max_turns,
        };
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
        let key: ResolvedKey;
        try {
          key = await keyFor(project);
        } catch (err) {
          return await fail(
            err instanceof AppError ? err.code : 'llm_unavailable',
            err instanceof Error ? err.message : 'No LLM key.',
          );
        }
        const scope = {
          userId: project.owner_id,
          projectId: project.id,
          workerId: worker.id,
          runId,
          keySource: keySource(project, key),
        };
        /** A spent budget: a `token_budget` event with the figures of the 429. */
        const budgetEvent = (err: AppError) => {
          const f = err.fields as { scope: string; used: number; cap: number };
          return act('token_budget', 'Token budget reached', `${f.used} of ${f.cap} tokens (${f.scope})`, {
            scope: f.scope,
            used: f.used,
            cap: f.cap,
          });
        };
        const isBudget = (err: unknown): err is AppError =>
          err instanceof AppError && err.code === 'token_budget_exceeded';
        try {
          await deps.usage.assertNotSpent(scope);
        } catch (err) {
          if (!isBudget(err)) throw err;
          await budgetEvent(err);
          return await fail('token_budget_exceeded', err.message);
        }
        const plan = pickModelPlan({
          messageModel: claimed.requested_model,
          modelMode: project.config.modelMode,
          workerModel: worker.model,
          role: worker.role,
        });
        await repo.updateRun(runId, { model: plan.models[0], cascade: plan.cascade });
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
        });
        const tools = runTools.tools;
        const { system } = await buildSystem({
          project,
          worker,
          skills: ports.skills,
          toolNames: tools.map((t) => t.name),
        });
        const messages: LlmMessage[] = [...(await history(project.id, worker.id, claimed.message_id))];
        if (messages.length && messages[messages.length - 1].role === 'user')
          messages[messages.length - 1] = {
            role: 'user',
            content: `${messages[messages.length - 1].content as string}\n\n${msg.content}`,
          };
        else messages.push({ role: 'user', content: msg.content });
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
        const totals = { input_tokens: 0, output_tokens: 0, cache_tokens: 0, total_tokens: 0 };
        /** The reservation of the model call under way, settled or released by onModelCall. */
        let reservation: number | null = null;
        /**
         * `session_start` ("… started working") is written once, when the first model call has its budget and is
         * about to be made: a run that fails before (no key, spent budget, cancelled while queued) never started.
         */
        let sessionStarted = false;
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
              apiKey: key.key,
              signal: ac.signal,
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
              async reserveCall(call) {
                try {
                  const grant = await deps.usage.reserve(scope, call);
                  reservation = grant.id;
                  if (!sessionStarted) {
                    sessionStarted = true;
                    await act('session_start', `${worker.label} started working`, msg.content.slice(0, 280));
                  }
                  return grant.maxTokens;
                } catch (err) {
                  if (!isBudget(err)) throw err;
                  // Stop between turns: what the run did so far is kept.
                  await budgetEvent(err);
                  throw new RunStop('token_budget_exceeded', err.message);
                }
              },
              async onModelCall({ model, usage }) {
                const id = reservation;
                reservation = null;
                if (!usage) {
                  if (id !== null) await deps.usage.release(id);
                  return;
                }
                const total = usage.input_tokens + usage.output_tokens + usage.cache_tokens;
                totals.input_tokens += usage.input_tokens;
                totals.output_tokens += usage.output_tokens;
                totals.cache_tokens += usage.cache_tokens;
                totals.total_tokens += total;
                await deps.usage.record({
                  userId: project.owner_id,
                  projectId: project.id,
                  projectName: project.name,
                  workerId: worker.id,
                  runId,
                  model,
                  source: 'worker',
                  keySource: scope.keySource,
                  usage,
                  reservationId: id,
                });
                await repo.updateRun(runId, { ...totals, model });
              },
              async beforeTurn(turn) {
                const row = await repo.beginTurn(runId, turn - 1);
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
            },
          )
          .finally(() => runTools.close());
        await finish(run, { ...result }, { prep_ms: prepMs, gen_ms: ms(genStart) });
      } catch (err) {
        deps.log.error({ err: (err as Error).message, run_id: runId }, 'agent run failed unexpectedly');
        await fail('internal_error', 'The run failed on our side; retry it.').catch(() => {});
      } finally {
        clearInterval(beat);
        local.delete(runId);
      }
    },

    /**
     * The crash rule (module header): requeue or fail runs whose process died; idle workers left working.
     * @returns the run ids requeued and failed.
     */
    async reconcile() {
      const stale = new Date(Date.now() - STALE_RUN_MS);
      const rows = await repo.staleRunning(stale);
      const requeued: number[] = [];
      const failed: number[] = [];
      if (rows.length) await deps.jobs.start(); // starting the queue inside the transaction below would deadlock PGlite
      for (const r of rows) {
        if (local.has(r.id)) continue;
        if (r.turns === 0) {
          const ok = await repo.transaction(async (tx) => {
            if (!(await repo.requeue(tx, r.id))) return false;
            await deps.jobs.send('runtime.run', { run_id: r.id }, { tx });
            return true;
          });
          if (ok) requeued.push(r.id);
        } else {
          const ended = await repo.endRunning(r.id, {
            status: 'failed',
            error: 'interrupted',
            message: 'The service stopped during this run; retry it.',
          });
          if (ended) failed.push(r.id);
        }
      }
      // Workers left working by a dead process (no running run) go idle.
      await repo.transaction((tx) => idleUnlessBusy(tx, null, ['running', 'queued']));
      return { requeued, failed };
    },

    /** Whether a run of the worker is running with a fresh heartbeat (a live session). */
    hasLiveRun: (workerId: number): Promise<boolean> => repo.hasLiveRun(workerId, new Date(Date.now() - STALE_RUN_MS)),

    /** Abort every run executing in this process (shutdown). */
    abortAll() {
      for (const ac of local.values()) ac.abort();
    },

    /**
     * Start step: reconcile runs interrupted by a restart, then sweep every SWEEP_MS (the crash rule) and
     * remove expired budget reservations.
     */
    async start() {
      const r = await service.reconcile();
      if (r.requeued.length || r.failed.length) deps.log.warn(r, 'runs interrupted by a restart were reconciled');
      sweep = setInterval(() => {
        service.reconcile().catch((err) => deps.log.error({ err: (err as Error).message }, 'run sweep failed'));
        deps.usage.purgeExpired().catch(() => {});
      }, SWEEP_MS);
      sweep.unref();
    },

    /** Stop the sweep and abort the runs executing here (their jobs are retried elsewhere). */
    async stop() {
      if (sweep) clearInterval(sweep);
      sweep = undefined;
      service.abortAll();
    },
  };

  /** Cancel a queued run now, or ask a running one to stop. */
  async function stopRun(runId: number, workerId: number) {
    if (await repo.cancelQueued(runId, 'Cancelled before it started.'))
      return deps.events.publish(runId, { type: 'end', status: 'cancelled' });
    const r = await repo.requestCancel(runId);
    if (!r) return;
    const ac = local.get(runId);
    if (ac) return ac.abort();
    if (r.heartbeat_at && +r.heartbeat_at >= Date.now() - STALE_RUN_MS) {
      // It executes on another instance: abort it there now (else it stops before its next turn anyway).
      return deps.bus.publish('run.cancel', { run: runId });
    }
    // Its process is gone: nobody will notice the request, so end it here.
    await repo.endRunning(runId, {
      status: 'cancelled',
      error: 'cancelled',
      message: 'Cancelled; its process had stopped.',
    });
    await repo.transaction((tx) => idleUnlessBusy(tx, [workerId], ['running'], runId));
  }

  return service;
}

export type RuntimeService = ReturnType<typeof createRuntimeService>;
export { MODEL_TIERS };
