/**
 * The durable job queue: pg-boss over the same database, PostgreSQL or PGlite; a crash or restart loses no job.
 * A job sent inside a transaction (`{tx}`) commits or rolls back with it, so a saved record and the
 * job that follows it up are never separated by a crash. Each job runs once across instances.
 *
 * Modules `define` their handlers while registering; the queue starts when the app is ready
 * (`onReady`) and stops on close. Sending from this process wakes the local worker at once, and, through the
 * event bus (`jobs.sent`, sent inside the job's transaction so it arrives at its commit), the workers of the
 * other instances, which otherwise would find the job at their next poll.
 */
import { PgBoss } from 'pg-boss';
import { CompiledQuery, sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../db/database.ts';
import type { DB } from '../db/types.ts';
import type { Bus } from '../lib/bus.ts';
import type { JobCatalog } from './catalog.ts';

export interface JobHandlerContext {
  id: string;
  /** Attempts made before this one (0 on the first run). */
  retryCount: number;
}

export interface DefineOptions {
  /** Jobs fetched per poll and run one after another (default 1). */
  batchSize?: number;
  /** Seconds between polls when idle (default 1, at least 0.5). */
  pollingIntervalSeconds?: number;
  /** Retries after a failure (default 2) and seconds between them (default 5). */
  retryLimit?: number;
  retryDelay?: number;
  /** Seconds a run may take before it counts as failed (default 15 minutes). */
  expireInSeconds?: number;
  /** Concurrent pollers of this queue in this process (default 1). */
  concurrency?: number;
}

export interface SendOptions {
  /** Send inside this transaction. */
  tx?: Transaction<DB> | Kysely<DB>;
  /** At most one queued job with this key (later sends are dropped while one waits). */
  singletonKey?: string;
  /** Run no earlier than this (Date, ISO string or seconds from now). */
  startAfter?: Date | string | number;
  retryLimit?: number;
}

/** A job name of catalog `C` (by default the service's own, `jobs/catalog.ts`). */
export type JobName<C> = Extract<keyof C, string>;

/**
 * The queue of catalog `C`: each job name is bound to its payload type, so sending or handling a job
 * with the wrong payload does not compile.
 */
export interface JobQueue<C extends object = JobCatalog> {
  define<N extends JobName<C>>(
    name: N,
    handler: (data: C[N], ctx: JobHandlerContext) => Promise<void>,
    opts?: DefineOptions,
  ): void;
  /**
   * Declare a queue this process sends to (possibly inside transactions) without consuming it here:
   * it is created when the queue starts, so a send inside a transaction needs no statement outside it
   * (on PGlite such a statement would wait for the transaction's own lock).
   */
  declare(name: JobName<C>): void;
  /**
   * Send job `name` with `data` at every occurrence of `cron` (UTC), once across instances: pg-boss's
   * `schedule`, kept in its `schedule` table and sent by whichever instance's clock pass comes first.
   * `missed: 'once'` sends one job for the latest occurrence that fell while no instance ran. Call before
   * `start()` (the schedule is written when the queue starts).
   */
  schedule<N extends JobName<C>>(name: N, cron: string, data: C[N], opts?: { missed?: 'skip' | 'once' }): void;
  /** Enqueue a job. @returns its id, or null when a singleton key suppressed it. */
  send<N extends JobName<C>>(name: N, data: C[N], opts?: SendOptions): Promise<string | null>;
  /** Install pg-boss's schema if needed, create the queues and start the workers. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Jobs of `name` not yet finished (created, retry or active). */
  pending(name: JobName<C>): Promise<number>;
  /** Jobs not yet finished of every queue that has any, by name (the metrics' queue depth); `{}` before start. */
  depths(): Promise<Record<string, number>>;
  /**
   * Drop the jobs of `name` not started yet (created, or waiting for a retry) whose payload field `field` is
   * one of `values` (the erasure drops an erased user's queued work). Pass `tx` inside a transaction.
   * @returns the number of jobs dropped
   */
  forget(
    name: JobName<C>,
    field: string,
    values: Array<string | number>,
    tx?: Transaction<DB> | Kysely<DB>,
  ): Promise<number>;
  /**
   * Mark jobs of `name` completed whoever holds them: the active job of a dead instance whose work was taken back
   * (docs/ARCHITECTURE.md, Crash recovery), so it is not retried an hour later. Pass `tx` inside a transaction
   * (after `start()`: starting inside it would wait for its own lock on the embedded database).
   */
  complete(name: JobName<C>, ids: string[], tx?: Transaction<DB> | Kysely<DB>): Promise<void>;
  /**
   * Stop taking jobs of `name` in this process (handlers under way go on): a stopping instance hands its work
   * to the others. A job fetched at that very moment is failed and retried after its delay.
   */
  pause(name: JobName<C>): Promise<void>;
  readonly started: boolean;
}

/** A pg-boss `Db` over a Kysely executor (the pool, or a transaction). */
export function kyselyExecutor(db: Kysely<DB> | Transaction<DB>) {
  return {
    async executeSql(text: string, values: unknown[] = []) {
      const res = await db.executeQuery(CompiledQuery.raw(text, values));
      return { rows: res.rows as any[] };
    },
  };
}

/**
 * pg-boss 11 rewrote its schema (version 25) and pg-boss 12 migrates only from there: an installation that ran
 * pg-boss 10 (schema version 24 or earlier) has its schema `pgboss` renamed to `LEGACY_SCHEMA` before pg-boss
 * starts, pg-boss installs its current schema, and `carryOverLegacyJobs` moves the unfinished jobs across.
 */
const LEGACY_SCHEMA = 'pgboss_v10';
const FIRST_CURRENT_SCHEMA_VERSION = 25;
const legacyLock = sql`select pg_advisory_xact_lock(hashtext('pgboss.legacy'))`;

/** Rename a pg-boss 10 schema out of the way (once, under a lock shared by every instance). */
async function setAsideLegacySchema(database: Database): Promise<void> {
  await database.db.transaction().execute(async (tx) => {
    if (database.kind === 'postgres') await legacyLock.execute(tx);
    const installed = await sql<{ t: string | null }>`select to_regclass('pgboss.version')::text as t`.execute(tx);
    if (!installed.rows[0]?.t) return;
    const v = await sql<{ version: number }>`select max(version)::int as version from pgboss.version`.execute(tx);
    if ((v.rows[0]?.version ?? 0) >= FIRST_CURRENT_SCHEMA_VERSION) return;
    await sql`alter schema pgboss rename to ${sql.id(LEGACY_SCHEMA)}`.execute(tx);
  });
}

interface Definition {
  handler: (data: any, ctx: JobHandlerContext) => Promise<void>;
  opts: DefineOptions;
}

/**
 * The queue over `database`.
 * @param bus when given, sends wake the pollers of every instance (see the module comment).
 */
export function createJobQueue<C extends object = JobCatalog>(
  database: Database,
  log: { error: (o: object, m: string) => void; warn: (o: object, m: string) => void },
  bus?: Bus,
  /** `jobFailed(name)` after each failed attempt of a handler (the metrics). */
  hooks: { jobFailed?(name: string): void } = {},
): JobQueue<C> {
  const defs = new Map<string, Definition>();
  const workerIds = new Map<string, string[]>();
  let boss: PgBoss | undefined;
  let starting: Promise<void> | undefined;
  const created = new Set<string>();
  const inFlight = new Set<Promise<void>>();
  let stopping = false;
  const declared = new Set<string>();
  const schedules = new Map<string, { cron: string; data: object; missed: 'skip' | 'once' }>();
  const paused = new Set<string>();
  const wakeLocal = (name: string) => {
    for (const w of workerIds.get(name) ?? []) boss?.notifyWorker(w);
  };
  bus?.subscribe('jobs.sent', ({ name }) => wakeLocal(name));
  // Wake-ups lost while the bus reconnected: every poller looks once.
  bus?.onGap(() => {
    for (const name of workerIds.keys()) wakeLocal(name);
  });

  // Statements pg-boss issues after its stop() returned (a fetch that was already under way, its fail())
  // are dropped: they never reach the database, which may be closing, and never settle, so that stopped
  // worker loop simply ends there. A job fetched in that moment is retried after its expiry.
  let stopped = false;
  const make = () =>
    new PgBoss({
      db: {
        executeSql: (text: string, values: any[]) =>
          stopped ? new Promise<{ rows: any[] }>(() => {}) : database.executeSql(text, values),
      },
      schema: 'pgboss',
      supervise: true,
      // pg-boss's clock (a pass over the schedules every 45 s, and the queue of due occurrences polled as
      // often) runs only where something is scheduled.
      schedule: schedules.size > 0,
      cronMonitorIntervalSeconds: 45,
      cronWorkerIntervalSeconds: 45,
      maintenanceIntervalSeconds: 120,
    });

  /**
   * Create queue `name` if it does not exist. pg-boss's `create_queue` attaches a partition to its job table:
   * two instances creating queues at the same moment deadlock, so on a server the creation runs while this
   * process holds a transaction-scoped advisory lock (on another pooled connection, released at its commit).
   */
  const ensureQueue = async (b: PgBoss, name: string) => {
    if (created.has(name)) return;
    if (!(await b.getQueue(name))) {
      if (database.kind !== 'postgres') await b.createQueue(name);
      else
        await database.db.transaction().execute(async (tx) => {
          await sql`select pg_advisory_xact_lock(hashtext('pgboss.create_queue'))`.execute(tx);
          await b.createQueue(name);
        });
    }
    created.add(name);
  };

  /**
   * Move the unfinished jobs (created, waiting for a retry, or running when pg-boss 10 stopped) of a set-aside
   * pg-boss 10 schema into the current one as new jobs with their payload, singleton key, start time and retry
   * settings (attempts made start again from 0), then drop that schema; one transaction, so a crash moves all
   * or nothing, and one instance does it.
   */
  const carryOverLegacyJobs = async (b: PgBoss) => {
    const legacy = sql<{ t: string | null }>`select to_regclass(${`${LEGACY_SCHEMA}.job`})::text as t`;
    if (!(await legacy.execute(database.db)).rows[0]?.t) return;
    const names = await sql<{ name: string }>`
      select distinct name from ${sql.table(`${LEGACY_SCHEMA}.job`)} where state < 'completed'`.execute(database.db);
    for (const { name } of names.rows) await ensureQueue(b, name);
    await database.db.transaction().execute(async (tx) => {
      if (database.kind === 'postgres') await legacyLock.execute(tx);
      if (!(await legacy.execute(tx)).rows[0]?.t) return;
      const jobs = await sql<{
        name: string;
        data: object | null;
        priority: number;
        retry_limit: number;
        retry_delay: number;
        retry_backoff: boolean;
        start_after: Date;
        singleton_key: string | null;
        expire_seconds: number;
      }>`select name, data, priority, retry_limit, retry_delay, retry_backoff, start_after, singleton_key,
            extract(epoch from expire_in)::int as expire_seconds
          from ${sql.table(`${LEGACY_SCHEMA}.job`)} where state < 'completed' order by created_on`.execute(tx);
      const byName = new Map<string, typeof jobs.rows>();
      for (const j of jobs.rows) byName.set(j.name, [...(byName.get(j.name) ?? []), j]);
      for (const [name, rows] of byName) {
        await b.insert(
          name,
          rows.map((j) => ({
            data: j.data ?? {},
            priority: j.priority,
            retryLimit: j.retry_limit,
            retryDelay: j.retry_delay,
            retryBackoff: j.retry_backoff,
            startAfter: j.start_after,
            expireInSeconds: j.expire_seconds,
            ...(j.singleton_key ? { singletonKey: j.singleton_key } : {}),
          })),
          { db: kyselyExecutor(tx) },
        );
      }
      await sql`drop schema ${sql.id(LEGACY_SCHEMA)} cascade`.execute(tx);
      if (jobs.rows.length) log.warn({ jobs: jobs.rows.length }, 'job queue: jobs carried over from pg-boss 10');
    });
  };

  const queue: JobQueue<C> = {
    get started() {
      return !!boss;
    },
    define(name, handler, opts = {}) {
      if (defs.has(name)) throw new Error(`job ${name} is defined twice`);
      defs.set(name, { handler, opts });
    },
    declare(name) {
      declared.add(name);
    },
    schedule(name, cron, data, opts = {}) {
      if (boss || starting) throw new Error(`job ${name}: schedule before the queue starts`);
      schedules.set(name, { cron, data: data as object, missed: opts.missed ?? 'skip' });
    },
    async send(name, data, opts = {}) {
      if (!boss) await queue.start();
      const b = boss!;
      await ensureQueue(b, name);
      const def = defs.get(name);
      const id = await b.send(name, data as object, {
        ...(opts.tx ? { db: kyselyExecutor(opts.tx) } : {}),
        ...(opts.singletonKey ? { singletonKey: opts.singletonKey } : {}),
        ...(opts.startAfter !== undefined ? { startAfter: opts.startAfter } : {}),
        retryLimit: opts.retryLimit ?? def?.opts.retryLimit ?? 2,
        retryDelay: def?.opts.retryDelay ?? 5,
        expireInSeconds: def?.opts.expireInSeconds ?? 900,
      });
      // Wake this process's worker; inside a transaction the job is visible only after commit, so wake a bit later too.
      wakeLocal(name);
      if (opts.tx) setTimeout(() => wakeLocal(name), 50).unref();
      // And the other instances' workers (at the commit, when inside a transaction).
      if (bus && bus.kind !== 'local') {
        if (opts.tx) await bus.publish('jobs.sent', { name }, { tx: kyselyExecutor(opts.tx) });
        else void bus.publish('jobs.sent', { name });
      }
      return id;
    },
    async start() {
      if (boss) return;
      starting ??= (async () => {
        stopped = false;
        await setAsideLegacySchema(database);
        const b = make();
        b.on('error', (err: Error) => log.error({ err: err.message }, 'job queue error'));
        // With schedules, pg-boss creates its queue of due occurrences at start: on a server, under the same
        // lock as every queue creation (see ensureQueue), so instances starting together do not deadlock.
        if (database.kind === 'postgres' && schedules.size > 0)
          await database.db.transaction().execute(async (tx) => {
            await sql`select pg_advisory_xact_lock(hashtext('pgboss.create_queue'))`.execute(tx);
            await b.start();
          });
        else await b.start();
        // The queues that exist already, in one statement rather than one per queue (ensureQueue creates the others).
        const names = [...new Set([...defs.keys(), ...declared, ...schedules.keys()])];
        if (names.length) for (const q of await b.getQueues(names, { limit: names.length })) created.add(q.name);
        for (const [name, def] of defs) {
          await ensureQueue(b, name);
          const ids: string[] = [];
          for (let i = 0; i < (def.opts.concurrency ?? 1); i++) {
            let self = '';
            self = await b.work(
              name,
              {
                batchSize: def.opts.batchSize ?? 1,
                pollingIntervalSeconds: def.opts.pollingIntervalSeconds ?? 1,
                includeMetadata: true,
              },
              async (jobs) => {
                // A fetch that was under way when stop() began: hand the jobs back (they are retried later)
                // instead of running them against a database that is about to close.
                if (stopping || paused.has(name)) throw new Error('job queue is stopping');
                const run = (async () => {
                  for (const job of jobs) {
                    await def.handler(job.data, { id: job.id, retryCount: job.retryCount }).catch((err) => {
                      hooks.jobFailed?.(name);
                      throw err;
                    });
                  }
                })();
                inFlight.add(run);
                try {
                  await run;
                } finally {
                  inFlight.delete(run);
                  // A poller that found work looks again at once instead of sleeping its polling interval.
                  if (jobs.length) setImmediate(() => boss?.notifyWorker(self));
                }
              },
            );
            ids.push(self);
          }
          workerIds.set(name, ids);
        }
        for (const name of declared) await ensureQueue(b, name);
        for (const [name, s] of schedules) {
          await ensureQueue(b, name);
          const def = defs.get(name);
          await b.schedule(name, s.cron, s.data, {
            tz: 'UTC',
            missed: s.missed,
            retryLimit: def?.opts.retryLimit ?? 2,
            retryDelay: def?.opts.retryDelay ?? 5,
            expireInSeconds: def?.opts.expireInSeconds ?? 900,
          });
        }
        await carryOverLegacyJobs(b);
        boss = b;
      })();
      try {
        await starting;
      } finally {
        starting = undefined;
      }
    },
    async stop() {
      const b = boss;
      if (!b) return;
      stopping = true;
      try {
        // Stop polling first, let running handlers finish, then stop pg-boss itself.
        for (const name of workerIds.keys()) await b.offWork(name).catch(() => {});
        await Promise.allSettled([...inFlight]);
        await b.stop({ graceful: true, timeout: 5000 });
      } finally {
        stopped = true;
        boss = undefined;
        workerIds.clear();
        created.clear();
        paused.clear();
        stopping = false;
      }
    },
    async pending(name) {
      if (!boss) return 0;
      // Counted from the job table: pg-boss's own queue counts are refreshed by its monitor, seconds late.
      const r = await sql<{ n: number }>`
        select count(*)::int as n from pgboss.job where name = ${name} and state < 'completed'`.execute(database.db);
      return Number(r.rows[0]?.n ?? 0);
    },
    async pause(name) {
      paused.add(name);
      await boss?.offWork(name, { wait: false }).catch(() => {});
    },
    async complete(name, ids, tx) {
      if (!ids.length) return;
      if (!boss) await queue.start();
      await boss!.complete(name, ids, null, tx ? { db: kyselyExecutor(tx) } : undefined);
    },
    async depths() {
      if (!boss) return {};
      const r = await sql<{ name: string; n: number }>`
        select name, count(*)::int as n from pgboss.job where state < 'completed' group by name`.execute(database.db);
      return Object.fromEntries(r.rows.map((row) => [row.name, Number(row.n)]));
    },
    async forget(name, field, values, tx) {
      if (!values.length) return 0;
      const ex = tx ?? database.db;
      // Before the queue's first start its tables may not exist yet: then nothing is queued.
      const t = await sql<{ t: string | null }>`select to_regclass('pgboss.job')::text as t`.execute(ex);
      if (!t.rows[0]?.t) return 0;
      const r = await sql<{ n: number }>`
        with d as (
          delete from pgboss.job where name = ${name} and state in ('created', 'retry')
            and data->>${field} in (${sql.join(values.map(String))})
          returning 1
        ) select count(*)::int as n from d`.execute(ex);
      return Number(r.rows[0]?.n ?? 0);
    },
  };
  return queue;
}
