/**
 * Instance leases (docs/ARCHITECTURE.md, "Crash recovery and instance leases"): each process of the service
 * holds a row in `instances` whose lease it renews every fifth of `leaseMs`. Work an instance holds (agent runs,
 * model-call reservations, pollers' leases) records the instance's id, so when the instance dies its work can be
 * found and taken back at once instead of after a long timeout:
 *
 * - **At start** the new process marks stopped every row of a dead predecessor it can recognize
 *   (`isPredecessor`: on the embedded database every other process; on a server a row of this machine whose
 *   process is gone), without waiting for its lease.
 * - **Every renewal** also marks stopped the rows whose lease lapsed (one instance wins each row) and hands
 *   their ids to the takeover handlers the composition root registered (`onTakeover`).
 * - **A lost lease** (this row was marked stopped by another instance: this process stalled past its lease)
 *   calls the `onLost` handlers, which drop the work taken over elsewhere, then the row is taken back.
 * - **Stop** marks the row stopped after the areas handed their work back (lifecycle order).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import type { InstancesRepo } from './instances.repo.ts';
import { isPredecessor, renewEvery, type Self } from './instances.rules.ts';

/** Days a stopped instance's row is kept (runs and reservations name it meanwhile). */
const KEEP_STOPPED_DAYS = 7;

export interface InstanceLeaseDeps {
  repo: InstancesRepo;
  /** Lease length (ms); renewed every fifth of it. */
  leaseMs: number;
  /** `host:port` or INSTANCE_NAME (shown in the row; the predecessor rule reads host, boot id and pid). */
  name: string;
  /** The embedded database: this process holds the data directory alone. */
  exclusive: boolean;
  log: { info(o: object, m: string): void; warn(o: object, m: string): void; error(o: object, m: string): void };
}

/** Whether process `pid` exists on this machine (signal 0; EPERM means it exists under another user). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The kernel's boot id (Linux), or null. */
function bootId(): string | null {
  try {
    return fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
  } catch {
    return null;
  }
}

/** Handles work of instances found dead (`reason`: `process_gone`, `lease_lapsed`). Must not throw for one item. */
export type TakeoverHandler = (instanceIds: string[], reason: string) => Promise<void>;

/** This process's lease (module header); built once by the composition root, started first, stopped last. */
export function createInstanceLease(deps: InstanceLeaseDeps) {
  const { repo, log } = deps;
  const self: Self = {
    id: crypto.randomUUID(),
    name: deps.name,
    host: os.hostname(),
    bootId: bootId(),
    pid: process.pid,
    processStartedAt: new Date(Math.round(performance.timeOrigin)),
    exclusive: deps.exclusive,
  };
  const row = {
    id: self.id,
    name: self.name,
    host: self.host,
    boot_id: self.bootId,
    pid: self.pid,
    process_started_at: self.processStartedAt,
  };
  const takeovers: TakeoverHandler[] = [];
  const lostHandlers: Array<() => void> = [];
  let timer: NodeJS.Timeout | undefined;
  let ticking: Promise<void> | undefined;
  let lastPrune = 0;

  async function takeOver(ids: string[], reason: string): Promise<void> {
    if (!ids.length) return;
    log.warn({ instances: ids, reason }, 'instances found dead: taking back their work');
    for (const h of takeovers) {
      try {
        await h(ids, reason);
      } catch (err) {
        log.error({ err, instances: ids }, 'taking back the work of a dead instance failed');
      }
    }
  }

  async function tick(): Promise<void> {
    if (!(await repo.renew(self.id, deps.leaseMs))) {
      log.error(
        { instance: self.id },
        'instance lease lost (this process stalled past its lease): its work was taken over elsewhere',
      );
      for (const h of lostHandlers) h();
      await repo.register(row, deps.leaseMs);
    }
    await takeOver(await repo.markStopped('lapsed', 'lease_lapsed'), 'lease_lapsed');
    if (Date.now() - lastPrune > 3600_000) {
      lastPrune = Date.now();
      await repo.prune(KEEP_STOPPED_DAYS);
    }
  }

  const lease = {
    /** This instance's id (runs, reservations and leases record it). */
    id: self.id,
    /** The lease length (ms). */
    leaseMs: deps.leaseMs,

    /** Register a handler for the work of instances found dead (called at start and on every renewal). */
    onTakeover(fn: TakeoverHandler): void {
      takeovers.push(fn);
    },

    /** Register a handler called when this instance's own lease was found taken over (drop the work held). */
    onLost(fn: () => void): void {
      lostHandlers.push(fn);
    },

    /**
     * Lifecycle start (first step): register this instance and mark stopped the rows of its dead predecessors and
     * of lapsed leases. Their work is taken back by `takeOverDead` once the areas have started.
     */
    async start(): Promise<void> {
      await repo.register(row, deps.leaseMs);
      const gone = (await repo.unstopped(self.id)).filter((r) => isPredecessor(r, self, pidAlive)).map((r) => r.id);
      pendingAtStart = [
        ...(await repo.markStopped(gone, 'process_gone')),
        ...(await repo.markStopped('lapsed', 'lease_lapsed')),
      ];
      log.info(
        { instance: self.id, name: self.name, lease_ms: deps.leaseMs, predecessors: pendingAtStart.length },
        'instance lease taken',
      );
    },

    /**
     * Lifecycle start (last step, the areas running): take back the work of the instances found dead at start,
     * then renew the lease every fifth of `leaseMs`, taking back the work of every lease found lapsed.
     */
    async takeOverDead(): Promise<void> {
      const ids = pendingAtStart;
      pendingAtStart = [];
      await takeOver(ids, 'process_gone');
      timer ??= setInterval(() => {
        if (ticking) return;
        ticking = tick()
          .catch((err) => log.warn({ err }, 'instance lease renewal failed'))
          .finally(() => (ticking = undefined));
      }, renewEvery(deps.leaseMs));
      timer.unref();
    },

    /** Lifecycle stop (after the areas handed their work back): stop renewing and mark this instance stopped. */
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      timer = undefined;
      await ticking;
      await repo.markStopped([self.id], 'stopped').catch((err) => log.warn({ err }, 'instance not marked stopped'));
    },

    /** Which of `ids` are live instances and which are dead (stopped); the rest are unknown. */
    states: (ids: string[]) => repo.states(ids),
  };
  let pendingAtStart: string[] = [];
  return lease;
}

export type InstanceLease = ReturnType<typeof createInstanceLease>;
