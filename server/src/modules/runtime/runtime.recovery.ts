/**
 * Taking runs back (docs/ARCHITECTURE.md, "Crash recovery and instance leases"): a running run whose instance is
 * dead (its lease lapsed, or a restarted process found it gone) or unknown is requeued at once to resume from its
 * journal, or failed with the reason when it cannot be resumed safely (journal.ts, `replayDecision`); a stopping
 * instance hands its own runs back the same way. Each change holds only under the claim it was decided on, so two
 * instances recovering at once change a run once.
 *
 * With each run taken back: the queue job that executed it is completed (not left active for an hour), the
 * reservations of its cut model call are charged (`usage.settleCrashed`), an activity event (`run_replayed` or
 * `run_interrupted`) and a log line say what happened.
 */
import type { JobQueue } from '../../jobs/queue.ts';
import type { ActivityLog } from '../../lib/activity.ts';
import type { UsageService } from '../usage/usage.service.ts';
import type { RunEvents } from './events.ts';
import { replayDecision, type ReplayDecision } from './journal.ts';
import type { RecoveryCandidate, RunClaim, RuntimeRepo } from './runtime.repo.ts';

export interface RunRecoveryDeps {
  repo: RuntimeRepo;
  jobs: Pick<JobQueue, 'start' | 'send' | 'complete'>;
  usage: Pick<UsageService, 'settleCrashed'>;
  activity: Pick<ActivityLog, 'record'>;
  events: Pick<RunEvents, 'publish'>;
  /** Which instances are live and which dead (the instances area). */
  instances: { states(ids: string[]): Promise<{ live: Set<string>; dead: Set<string> }> };
  /** Workers of runs that ended go idle unless another run of theirs is queued or running. */
  idle(workerIds: number[]): Promise<void>;
  log: { info(o: object, m: string): void; warn(o: object, m: string): void; error(o: object, m: string): void };
}

/** Why a run is taken back: its instance died, or the instance executing it is stopping. */
export type TakeBackReason = 'instance_dead' | 'instance_stopping';

/** The recovery of runs (module header); built by the runtime service. */
export function createRunRecovery(deps: RunRecoveryDeps) {
  const { repo, log } = deps;

  /**
   * Take run `run` back under its claim with `decision`. @returns `requeued`, `failed`, or null when the run had
   * changed meanwhile (ended, or taken back by another instance).
   */
  async function takeBack(
    run: RecoveryCandidate,
    decision: ReplayDecision,
    reason: TakeBackReason,
  ): Promise<'requeued' | 'failed' | null> {
    const fence: RunClaim = { instance_id: run.instance_id, replays: run.replays };
    const event = {
      userId: run.user_id,
      actor: 'system',
      projectId: run.project_id,
      workerId: run.worker_id,
    };
    const why = reason === 'instance_dead' ? 'its instance stopped' : 'its instance is stopping';
    await deps.jobs.start(); // not inside the transaction: starting the queue there would wait for its own lock
    const done = await repo.transaction(async (tx) => {
      if (decision.action === 'requeue') {
        if (!(await repo.requeueClaimed(tx, run.id, fence))) return null;
        await deps.jobs.send('runtime.run', { run_id: run.id }, { tx });
        await deps.activity.record(
          {
            ...event,
            type: 'run_replayed',
            title: `Run ${run.id} resumed after an interruption`,
            detail: `${why}; ${run.turns} turn(s) kept`,
            payload: { run_id: run.id, replay: run.replays + 1, turns: run.turns, reason, instance: run.instance_id },
          },
          tx,
        );
      } else {
        if (!(await repo.failClaimed(tx, run.id, fence, decision))) return null;
        await deps.activity.record(
          {
            ...event,
            type: 'run_interrupted',
            title: `Run ${run.id} failed after an interruption`,
            detail: decision.message,
            payload: { run_id: run.id, error: decision.error, reason, instance: run.instance_id },
          },
          tx,
        );
      }
      if (run.job_id) await deps.jobs.complete('runtime.run', [run.job_id], tx);
      return decision.action === 'requeue' ? ('requeued' as const) : ('failed' as const);
    });
    if (!done) return null;
    const charged = await deps.usage.settleCrashed({ runIds: [run.id] });
    const fields = {
      run_id: run.id,
      worker_id: run.worker_id,
      instance: run.instance_id,
      replay: run.replays + 1,
      turns: run.turns,
      reason,
      charged_calls: charged.length,
      charged_tokens: charged.reduce((a, c) => a + c.total_tokens, 0),
    };
    if (done === 'requeued') log.info(fields, 'run requeued: it resumes after its last completed step');
    else {
      log.warn({ ...fields, error: decision.action === 'fail' ? decision.error : null }, 'run failed: not resumable');
      deps.events.publish(run.id, { type: 'end', status: 'failed' });
      await deps.idle([run.worker_id]);
    }
    return done;
  }

  return {
    /**
     * Take back every running run whose instance is dead or unknown (claimed before instances kept leases): the
     * candidates are read first, the instances' states after, so a run claimed by an instance that registered
     * meanwhile is seen live. @returns the run ids requeued and failed.
     */
    async recoverOrphans(): Promise<{ requeued: number[]; failed: number[] }> {
      const requeued: number[] = [];
      const failed: number[] = [];
      const running = await repo.runningRuns();
      if (!running.length) return { requeued, failed };
      const ids = [...new Set(running.map((r) => r.instance_id).filter((x): x is string => !!x))];
      const { live } = await deps.instances.states(ids);
      for (const run of running) {
        if (run.instance_id && live.has(run.instance_id)) continue;
        try {
          const r = await takeBack(run, replayDecision(run), 'instance_dead');
          if (r === 'requeued') requeued.push(run.id);
          else if (r === 'failed') failed.push(run.id);
        } catch (err) {
          log.error({ err, run_id: run.id }, 'run not taken back');
        }
      }
      return { requeued, failed };
    },

    /**
     * Hand back run `runId` that this instance executes under `claim` (a stop): requeued to resume from its
     * journal on any instance, or failed when it cannot be (journal.ts). @returns what was done, or null when the
     * run had already changed.
     */
    async handBack(runId: number, claim: RunClaim): Promise<'requeued' | 'failed' | null> {
      const run = (await repo.runningRuns([runId])).find(
        (r) => r.instance_id === claim.instance_id && r.replays === claim.replays,
      );
      if (!run) return null;
      return takeBack(run, replayDecision({ ...run, replays: 0 }), 'instance_stopping');
    },
  };
}

export type RunRecovery = ReturnType<typeof createRunRecovery>;

/** What happens to a run executing here when its engine returns: finished, handed back (stop), or dropped. */
export type LocalRunState = 'running' | 'handing_back' | 'lost';

/**
 * The runs this process executes, for a stop (hand each back: abort it, then requeue it from its journal) and for
 * a lost lease (drop each: it was taken back elsewhere, nothing more is written for it here).
 */
export function createLocalRuns() {
  const runs = new Map<number, { ac: AbortController; state: LocalRunState; done: Promise<void>; end: () => void }>();
  let closing = false;
  return {
    /** Whether this process is stopping (no run starts any more). */
    get closing() {
      return closing;
    },
    /** Track run `id` executing under `ac` until `remove`. */
    add(id: number, ac: AbortController): void {
      let end = () => {};
      const done = new Promise<void>((r) => (end = r));
      runs.set(id, { ac, state: 'running', done, end });
    },
    remove(id: number): void {
      runs.get(id)?.end();
      runs.delete(id);
    },
    /** The state of run `id` here (`running` when unknown). */
    state: (id: number): LocalRunState => runs.get(id)?.state ?? 'running',
    /** Run `id` is no longer this process's (its claim changed): abort it, write nothing more for it. */
    lose(id: number): void {
      const r = runs.get(id);
      if (!r) return;
      r.state = 'lost';
      r.ac.abort();
    },
    /** Every run here was taken back elsewhere (this instance's lease was lost). */
    loseAll(): void {
      for (const id of runs.keys()) this.lose(id);
    },
    /** Stop: abort every run here to be handed back, and wait until each execution has returned. */
    async handBackAll(): Promise<void> {
      closing = true;
      for (const r of runs.values()) {
        if (r.state === 'running') r.state = 'handing_back';
        r.ac.abort();
      }
      await Promise.allSettled([...runs.values()].map((r) => r.done));
    },
  };
}
