/**
 * Run management of the worker runtime (docs/ARCHITECTURE.md, Worker runtime): messages become agent runs that execute
 * as durable jobs (runtime.execution.ts executes them, every model call metered through the model gateway); daily and
 * trial budgets stop new runs; runs can be cancelled, retried, listed, restarted and reconciled after a crash.
 *
 * Durability: `submit` stores the user's message, one run row per worker and their jobs in ONE
 * transaction (the lifecycle starts the job queue before requests are served). The job handler claims its run
 * atomically (queued → running, recording this instance), so a duplicate delivery does nothing. A running run
 * beats a heartbeat (each turn and every HEARTBEAT_MS) and stores its journal after every step that must not be
 * repeated (runtime.execution.ts). Crash recovery (runtime.recovery.ts, docs/ARCHITECTURE.md): a running run whose
 * instance died is requeued at once to resume from its journal, or failed with the reason when a tool with
 * effects was cut; a stopping instance hands its runs back the same way. The sweep every SWEEP_MS catches what a
 * takeover missed.
 */
import type { Static } from 'typebox';
import type { Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { Actor } from '../../http/auth.ts';
import type { Access, ProjectRef } from '../../access/access.ts';
import type { ActivityLog } from '../../lib/activity.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { BadRequest, Conflict, NotFound } from '../../http/errors.ts';
import type { UsageService } from '../usage/usage.service.ts';
import type { RunEvents } from './events.ts';
import type { Bus } from '../../lib/bus.ts';
import type { RunExecution } from './runtime.execution.ts';
import { STALE_RUN_MS } from './runtime.rules.ts';
import { asJournal } from './journal.ts';
import type { RunRow, RunStatus, RuntimeRepo } from './runtime.repo.ts';
import type { WorkersRepo } from '../workers/workers.repo.ts';
import type * as S from './runtime.schemas.ts';

/** How often the crash sweep runs (ms). */
export const SWEEP_MS = 60_000;

export interface RuntimeDeps {
  /** Runs and chat messages. */
  repo: RuntimeRepo;
  /** The workers runs are for. */
  workers: Pick<WorkersRepo, 'pick' | 'ids'>;
  access: Pick<Access, 'project'>;
  activity: ActivityLog;
  jobs: JobQueue;
  /** Expired budget reservations are swept with the runs (the usage area). */
  usage: Pick<UsageService, 'purgeExpired'>;
  /** Executes the claimed runs (runtime.execution.ts): key and budget gate, aborts, idle workers. */
  execution: RunExecution;
  /** Events of runs, for the streams that follow them on any instance. */
  events: RunEvents;
  /** Cancels reach the instance executing the run (`run.cancel`). */
  bus: Pick<Bus, 'publish'>;
  /**
   * The project owner's cloud container: a message (web or messenger, both come through `submit`) resumes it
   * first when paused (a no-op without one).
   */
  containers?: { resumeUser(userId: number): Promise<void> };
  log: { info(o: object, m: string): void; warn(o: object, m: string): void; error(o: object, m: string): void };
}

export interface SubmitBody {
  worker_id?: number;
  worker_ids?: number[];
  text: string;
  model?: string;
}

/** A run as the API shows it (`GET /projects/:name/runs/:id`; the `Run` response schema). */
export type RunView = Static<typeof S.Run>;

/** The worker runtime (module header); built once by the composition root, started by its lifecycle. */
export function createRuntimeService(deps: RuntimeDeps) {
  const { repo, execution } = deps;
  const { idleUnlessBusy } = execution;
  let sweep: NodeJS.Timeout | undefined;

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
        engine: execution.engine,
      });
      await deps.jobs.send('runtime.run', { run_id: runId }, { tx });
      runIds.push(runId);
    }
    return runIds;
  }

  const service = {
    /** This process's id, stored on the runs it claims. */
    instanceId: execution.instanceId,
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
      for (const id of ids) await execution.gate(project, id);
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

    /** `GET /projects/:name/runs/:id`, each tool call with its redacted, bounded `result` (tool-result.ts). @throws 404 `run_not_found`. */
    async getRun(actor: Actor, name: string, runId: number): Promise<RunView> {
      const project = await deps.access.project(actor, name);
      return loadRun(project, runId);
    },

    /**
     * Run `runId` with the text it has written so far: the stored reply once it ended, else the text of its kept
     * turns (journal.ts; the turn being generated is not in it). For a client that re-attaches to a run's events.
     * @throws 404 `run_not_found`.
     */
    async progress(actor: Actor, name: string, runId: number): Promise<{ run: RunView; text: string }> {
      const project = await deps.access.project(actor, name);
      const run = await loadRun(project, runId);
      if (run.reply !== null) return { run, text: run.reply };
      const row = await repo.run(project.id, runId);
      return { run, text: asJournal(row?.journal)?.texts.join('\n\n') ?? '' };
    },

    /**
     * `POST /projects/:name/runs/:id/cancel`: a queued run is cancelled at once; a running one is asked to
     * stop (its model call is aborted when it runs here; elsewhere it stops before its next turn); a run waiting for
     * an approval is cancelled at once.
     * @throws 404 `run_not_found`; 409 `run_not_active` when it already ended.
     */
    async cancel(actor: Actor, name: string, runId: number): Promise<RunView> {
      const project = await deps.access.project(actor, name);
      const run = await loadRun(project, runId);
      if (run.status !== 'queued' && run.status !== 'running' && run.status !== 'waiting_approval')
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
      await execution.gate(project, run.worker_id);
      const [id] = await repo.transaction((tx) =>
        enqueueRuns(tx, project, actor.id, run.message_id, [run.worker_id], run.requested_model, run.id),
      );
      return { run_id: id, retry_of: run.id };
    },

    /**
     * `GET /projects/:name/runs`: the project's runs, newest first, paged by id (`limit` default 50, at most
     * 200; `before` a run id), optionally of one worker and in one state. Tool calls come without their `result`.
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
        // The list leaves the tool results out (up to 4 KiB each, polled every 2 s); a run's page has them.
        runs: page.map((r) => {
          const v = toView(r, r.reply);
          return { ...v, tool_calls: v.tool_calls.map(({ result: _result, ...c }) => c) };
        }),
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

    /** The `runtime.run` job: execute run `runId` if it is still queued (runtime.execution.ts). */
    execute: (runId: number, jobId?: string): Promise<void> => execution.execute(runId, jobId),

    /**
     * The crash rule (module header): requeue or fail runs whose process died; idle workers left working.
     * @returns the run ids requeued and failed.
     */
    async reconcile() {
      // Crash recovery (runtime.recovery.ts): runs of dead or unknown instances are requeued or failed.
      const { requeued, failed } = await execution.recoverOrphans();
      // Workers left working by a dead process (no running run) go idle.
      await repo.transaction((tx) => idleUnlessBusy(tx, null, ['running', 'queued']));
      return { requeued, failed };
    },

    /** How many runs are in each status now, across instances (docs/operations.md, Metrics). */
    statusCounts: (): Promise<Record<string, number>> => repo.countByStatus(),

    /** Whether a run of the worker is running with a fresh heartbeat (a live session). */
    hasLiveRun: (workerId: number): Promise<boolean> => repo.hasLiveRun(workerId, new Date(Date.now() - STALE_RUN_MS)),

    /** Abort every run executing in this process (shutdown). */
    abortAll(): void {
      execution.abortAll();
    },

    /** Crash recovery: this instance's lease was lost; its runs were taken back elsewhere, so drop them here. */
    dropAll(): void {
      execution.loseAll();
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

    /**
     * Stop the sweep; stop taking runs and hand the runs executing here back (requeued to resume after their last
     * completed step on any instance), waiting until each is handed back.
     */
    async stop() {
      if (sweep) clearInterval(sweep);
      sweep = undefined;
      await deps.jobs.pause('runtime.run');
      await execution.handBackAll();
    },
  };

  /** Cancel a queued run now, or ask a running one to stop. */
  async function stopRun(runId: number, workerId: number) {
    if (await repo.cancelQueued(runId, 'Cancelled before it started.'))
      return deps.events.publish(runId, { type: 'end', status: 'cancelled' });
    const r = await repo.requestCancel(runId);
    if (!r) return;
    if (execution.abort(runId)) return;
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
