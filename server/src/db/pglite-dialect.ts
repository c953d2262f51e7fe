/**
 * A Kysely dialect over PGlite (PostgreSQL compiled to WASM), so the embedded database runs the same
 * SQL as a PostgreSQL server (the embedded default: no database server needed).
 *
 * PGlite is one backend session: every statement shares it. The driver therefore hands out a single
 * connection guarded by a FIFO lock, held from `acquireConnection` to `releaseConnection`, so a
 * transaction never interleaves with another caller's statements. `withLock` lets non-Kysely users
 * (the job queue) take the same lock. Statements run as prepared statements of the session, one call into PGlite
 * each (`Statements`).
 */
import type { PGlite, Results } from '@electric-sql/pglite';
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import { assertNoOpenTransaction } from './tx-guard.ts';

/**
 * How long the lock may be handed from holder to holder without the event loop getting a turn (ms). PGlite runs a
 * statement synchronously and resolves it in a microtask, and each hand-off is one more microtask: under a queue
 * of callers the statements would follow one another without the loop ever reaching timers or I/O (measured in
 * bench/runtime.ts: timers ~300 ms late at the median, seconds at worst, with 16 runs and their job queue at
 * work). Past this slice the next holder starts after `setImmediate`, the order staying FIFO.
 */
const LOOP_SLICE_MS = 4;
let sliceStart = performance.now();

/** Resolves at once while the current slice lasts, else after the event loop's next turn (a new slice). */
function loopTurn(): Promise<void> | void {
  if (performance.now() - sliceStart < LOOP_SLICE_MS) return;
  return new Promise<void>((resolve) =>
    setImmediate(() => {
      sliceStart = performance.now();
      resolve();
    }),
  );
}

/** FIFO async mutex; a hand-off lets the event loop take a turn now and then (`LOOP_SLICE_MS`). */
export class Lock {
  private tail: Promise<void> = Promise.resolve();
  private holders = 0;
  /** The holder and the waiters: 0 when free (the metrics' database pool of the embedded database). */
  get queued(): number {
    return this.holders;
  }
  /** Wait for the lock; resolves to the release function. */
  acquire(): Promise<() => void> {
    let release!: () => void;
    const next = new Promise<void>((r) => (release = r));
    const prev = this.tail;
    this.tail = prev.then(() => next);
    this.holders++;
    let released = false;
    return prev.then(loopTurn).then(() => () => {
      if (!released) {
        released = true;
        this.holders--;
      }
      release();
    });
  }
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

/**
 * How many statements stay prepared on the embedded database's one session (least recently used closed first).
 * A distinct text is a distinct statement: Kysely's `in ($1, …)` lists make one per list length.
 */
const PREPARED_MAX = 256;
/**
 * How long a statement stays prepared before it is parsed again (ms), and after how many executions at most.
 * PostgreSQL may give a prepared statement a generic plan after five executions and then keeps it; the embedded
 * database has no autovacuum whose statistics would invalidate it, so a plan made while a table was small (a
 * sequential scan of one page) would stay as the table grows. Preparing again lets the next plans see the table as it
 * is now: one parse and describe per statement per minute.
 */
const PREPARED_TTL_MS = 60_000;
const PREPARED_USES_MAX = 10_000;
/** Statements kept prepared: the ones with a plan (their text is a cache key, their parameters vary). */
const PREPARABLE = /^\s*(select|insert|update|delete|with)\b/i;
/**
 * Transaction control and settings (`set local hnsw.ef_search = …` before a search): not prepared, and they leave
 * the prepared statements in place. A setting the planner reads is handled by `plannerSetting`.
 */
const KEEPS_PLANS = /^\s*(begin|start|commit|end|rollback|savepoint|release|set|reset|show)\b/i;
/**
 * Settings the planner does not read: a plan made before one of them changed still does what it should. A name with a
 * dot is an extension's or a custom one (`hnsw.ef_search`, `pgboss.test_clock`), read when the statement runs.
 */
const PLAN_FREE =
  /^(\w+\.[\w.]+|transaction|statement_timeout|lock_timeout|idle_in_transaction_session_timeout|transaction_timeout|maintenance_work_mem|application_name|client_min_messages|timezone|time)$/i;

/**
 * Whether statement `text` changes a setting the planner reads (`set local enable_indexscan = off`, `select
 * set_config('enable_sort', 'off', true)`, a name given as a parameter included): `transaction` for a setting that
 * ends with the transaction, `session` for one that stays, else null. A generic plan kept from before would not see it.
 */
export function plannerSetting(text: string, params: readonly unknown[]): 'transaction' | 'session' | null {
  const set = /^\s*(?:set\s+(local\s+|session\s+)?|reset\s+)([\w."]+)/i.exec(text);
  if (set) {
    if (PLAN_FREE.test(set[2].replaceAll('"', ''))) return null;
    return set[1]?.trim().toLowerCase() === 'local' ? 'transaction' : 'session';
  }
  // A plain substring search: a case-insensitive regex over every statement's text (the job queue's are kilobytes)
  // cost ~2 µs a statement.
  if (!text.includes('set_config') && !text.includes('SET_CONFIG')) return null;
  let found: 'transaction' | 'session' | null = null;
  for (const m of text.matchAll(/set_config\s*\(\s*(?:'([^']+)'|\$(\d+))[^,]*,[^,]*,\s*(\w+|\$\d+)/gi)) {
    const name = m[1] ?? String(params[Number(m[2]) - 1]);
    if (PLAN_FREE.test(name)) continue;
    const local = /^\$\d+$/.test(m[3]) ? params[Number(m[3].slice(1)) - 1] : m[3].toLowerCase();
    if (local === true || local === 'true') found ??= 'transaction';
    else found = 'session';
  }
  return found;
}
/**
 * `insert … on conflict (…) where …`: the arbiter is a partial unique index, which PostgreSQL infers from the
 * statement's predicate when it plans it. A generic plan cannot (its `$1` has no value), so these run as an unnamed
 * statement, planned with their parameters every time.
 */
const PARTIAL_ARBITER = /\bon\s+conflict\s*\([^)]*\)\s*where\b/i;
/**
 * A prepared statement that can no longer run as prepared: `0A000` "cached plan must not change result type" (a
 * table of a `select *` changed), `26000` the statement is gone (the session's statements were deallocated).
 */
const stale = (err: { code?: string; message?: string }) =>
  err.code === '26000' || (err.code === '0A000' && /cached plan/.test(err.message ?? ''));

/**
 * Start parameters the embedded database runs with for `Statements` (PGlite's `startParams`, beside its own).
 * `plan_cache_mode=auto`, PostgreSQL's default, said outright: a prepared statement is planned for its parameters
 * for its first five executions, then keeps a generic plan when that plan costs no more than theirs did on average
 * (bench/README.md, "Runtime, sixth round": ~0.1 ms less per statement, a quarter of a chat run's CPU). What a
 * generic plan cannot do is handled apart: an `on conflict (…) where …` runs unnamed (`PARTIAL_ARBITER`), a
 * statement is prepared again after `PREPARED_TTL_MS` so its plan follows the tables' growth, and after a setting the
 * planner reads (`plannerSetting`) the rest of the transaction is planned with its parameters.
 */
export const PGLITE_SESSION_PARAMS = ['-c', 'plan_cache_mode=auto'];

type PGliteLib = typeof import('@electric-sql/pglite');
let pgliteLib: Promise<PGliteLib> | undefined;
const statementsOf = new WeakMap<PGlite, Statements>();

/**
 * How the embedded database runs one statement, in one call into PGlite (PGlite's own `query` makes six: parse,
 * describe, bind, describe, execute, sync, and PostgreSQL parses, analyzes and plans the text every time):
 *
 * - a statement with a plan (select, insert, update, delete, with) runs as a prepared statement of the session,
 *   named after its text: bind, describe, execute and sync; after five executions PostgreSQL may keep a generic
 *   plan (`PGLITE_SESSION_PARAMS`). A text seen for the first time is parsed under a name
 *   and described first (its parameters' types choose their serializers, as in `query`). At most `PREPARED_MAX`
 *   stay prepared, each for at most `PREPARED_TTL_MS` or `PREPARED_USES_MAX` executions (then parsed again, so a
 *   generic plan follows the tables' growth). An `insert … on conflict (…) where …` runs as PGlite's `query`
 *   (`PARTIAL_ARBITER`). After a `set local` of a setting the planner reads (`plannerSetting`), the statements of
 *   the rest of the transaction are planned with their parameters (`plan_cache_mode` set for it); after such a
 *   setting for the session, every prepared statement is forgotten. PostgreSQL re-plans a prepared statement when
 *   a table under it changes; one whose result type changed (a `select *`) is prepared again from its text (at once
 *   outside a transaction; inside one its error ends the transaction, as any failed statement does). Other
 *   statements than these forget every prepared one.
 * - transaction control and settings without parameters: PGlite's simple query, one call.
 * - anything else: PGlite's `query`.
 *
 * The parameters are serialized and the rows parsed by PGlite's own serializers, parsers and protocol code, so the
 * results are `query`'s. Callers hold the dialect's lock (`Lock`); the calls also take PGlite's own exclusive-query
 * lock, as `query` does. One object per PGlite instance (`Statements.of`), shared by the dialect and the raw SQL of
 * the job queue (db/database.ts, `executeSql`).
 */
export class Statements {
  /** SQL text → the statement's name and its parameters' type OIDs (from the server's description). */
  private readonly byText = new Map<string, { name: string; types: number[]; until: number; uses: number }>();
  private seq = 0;
  /** Names to close at the next statement outside a transaction (evicted or forgotten inside one). */
  private readonly toClose: string[] = [];
  private constructor(private readonly pg: PGlite) {}

  /** The statements of `pg` (one object per PGlite instance). */
  static of(pg: PGlite): Statements {
    let st = statementsOf.get(pg);
    if (!st) statementsOf.set(pg, (st = new Statements(pg)));
    return st;
  }

  /**
   * Run one statement (`$1`… parameters) and answer PGlite's result for it.
   * @throws the database's error (`DatabaseError`, with `query` and `params` set as `query` sets them).
   */
  async run<R>(text: string, params: readonly unknown[]): Promise<Results<R>> {
    const setting = plannerSetting(text, params);
    if (setting === 'session') this.forgetAll();
    const result = await this.runOne<R>(text, params);
    // Planned with their parameters until the transaction ends, so they see the setting (a generic plan would not).
    if (setting === 'transaction' && this.pg.isInTransaction())
      await this.simple('set local plan_cache_mode = force_custom_plan');
    return result;
  }

  private runOne<R>(text: string, params: readonly unknown[]): Promise<Results<R>> {
    if (PARTIAL_ARBITER.test(text)) return this.pg.query<R>(text, params as unknown[]);
    if (PREPARABLE.test(text)) return this.prepared<R>(text, params, false);
    if (!KEEPS_PLANS.test(text)) this.forgetAll();
    else if (params.length === 0) return this.simple<R>(text);
    return this.pg.query<R>(text, params as unknown[]);
  }

  /** Whether `text` is one statement that `run` keeps prepared (else a script: PGlite's `exec`). */
  static preparable(text: string): boolean {
    return PREPARABLE.test(text) && !/;\s*\S/.test(text);
  }

  /** Forget every prepared statement (closed at the next statement outside a transaction). */
  forgetAll(): void {
    for (const st of this.byText.values()) this.toClose.push(st.name);
    this.byText.clear();
  }

  private async simple<R>(text: string): Promise<Results<R>> {
    const lib = await (pgliteLib ??= import('@electric-sql/pglite'));
    const { serialize } = lib.protocol;
    const pg = this.pg;
    try {
      return await pg.runExclusive(async () => {
        const { messages } = await pg.execProtocol(concat([serialize.query(text), serialize.sync()]), {
          syncToFs: false,
        });
        if (!pg.isInTransaction()) await pg.syncToFs();
        return lib.parse.parseResults(messages, pg.parsers)[0] as Results<R>;
      });
    } catch (err) {
      if (err && typeof err === 'object') Object.assign(err, { query: text, params: [] });
      throw err;
    }
  }

  private async prepared<R>(text: string, params: readonly unknown[], again: boolean): Promise<Results<R>> {
    const lib = await (pgliteLib ??= import('@electric-sql/pglite'));
    const { serialize } = lib.protocol;
    const pg = this.pg;
    try {
      return await pg.runExclusive(async () => {
        const head: Uint8Array[] = [];
        if (this.toClose.length && !pg.isInTransaction()) {
          for (const name of this.toClose.splice(0)) head.push(serialize.close({ type: 'S', name }));
        }
        let st = this.byText.get(text);
        if (st) this.byText.delete(text);
        if (st && (++st.uses > PREPARED_USES_MAX || performance.now() > st.until)) {
          // Parsed again below, so its next plans see the tables as they are now.
          if (pg.isInTransaction()) this.toClose.push(st.name);
          else head.push(serialize.close({ type: 'S', name: st.name }));
          st = undefined;
        }
        if (st) {
          // Most recently used last.
          this.byText.set(text, st);
        } else {
          const name = `k${++this.seq}`;
          const described = await pg.execProtocol(
            concat([
              ...head.splice(0),
              serialize.parse({ name, text }),
              serialize.describe({ type: 'S', name }),
              serialize.sync(),
            ]),
            { syncToFs: false },
          );
          st = {
            name,
            types: lib.parse.parseDescribeStatementResults(described.messages),
            until: performance.now() + PREPARED_TTL_MS,
            uses: 1,
          };
          this.byText.set(text, st);
          if (this.byText.size > PREPARED_MAX) {
            const [oldText, old] = this.byText.entries().next().value!;
            this.byText.delete(oldText);
            if (pg.isInTransaction()) this.toClose.push(old.name);
            else head.push(serialize.close({ type: 'S', name: old.name }));
          }
        }
        const types = st.types;
        const values = params.map((v, i) => {
          if (v === null || v === undefined) return null;
          const ser = pg.serializers[types[i]];
          return ser ? ser(v) : String(v);
        });
        const { messages } = await pg.execProtocol(
          concat([
            ...head,
            serialize.bind({ statement: st.name, values }),
            serialize.describe({ type: 'P' }),
            serialize.execute({}),
            serialize.sync(),
          ]),
          { syncToFs: false },
        );
        if (!pg.isInTransaction()) await pg.syncToFs();
        return lib.parse.parseResults(messages, pg.parsers)[0] as Results<R>;
      });
    } catch (err) {
      if (err && typeof err === 'object' && stale(err)) {
        // Prepared again from its text next time; outside a transaction at once.
        const st = this.byText.get(text);
        this.byText.delete(text);
        if (st) this.toClose.push(st.name);
        if (!again && !pg.isInTransaction()) return this.prepared<R>(text, params, true);
      }
      if (err && typeof err === 'object') Object.assign(err, { query: text, params });
      throw err;
    }
  }
}

class PGliteConnection implements DatabaseConnection {
  private readonly statements: Statements;
  constructor(private readonly pg: PGlite) {
    this.statements = Statements.of(pg);
  }
  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    if (compiled.parameters.length === 0 && /;\s*\S/.test(compiled.sql)) {
      // A multi-statement script (migrations): the simple query protocol. It may change tables: forget the plans.
      this.statements.forgetAll();
      const all = await this.pg.exec(compiled.sql);
      return { rows: (all[all.length - 1]?.rows ?? []) as R[] };
    }
    return resultOf<R>(await this.statements.run<R>(compiled.sql, compiled.parameters));
  }
  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not supported on the embedded database');
  }
}

/** Kysely's result of a PGlite result. */
function resultOf<R>(res: Results<R>): QueryResult<R> {
  const affected = res.affectedRows;
  return {
    rows: res.rows,
    ...(affected !== undefined && affected !== null ? { numAffectedRows: BigInt(affected) } : {}),
  };
}

/** The protocol messages as one buffer (one call into the database). */
function concat(parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const b of parts) n += b.length;
  const out = new Uint8Array(n);
  let at = 0;
  for (const b of parts) {
    out.set(b, at);
    at += b.length;
  }
  return out;
}

export class PGliteDriver implements Driver {
  private readonly conn: PGliteConnection;
  private releaseFn: (() => void) | undefined;
  constructor(
    readonly pg: PGlite,
    readonly lock: Lock,
  ) {
    this.conn = new PGliteConnection(pg);
  }
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    assertNoOpenTransaction();
    this.releaseFn = await this.lock.acquire();
    return this.conn;
  }
  async beginTransaction(conn: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const iso = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : '';
    await conn.executeQuery(CompiledQuery.raw(`begin${iso}`));
  }
  async commitTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('commit'));
  }
  async rollbackTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('rollback'));
  }
  async releaseConnection(): Promise<void> {
    const r = this.releaseFn;
    this.releaseFn = undefined;
    r?.();
  }
  async destroy(): Promise<void> {}
}

/** Kysely dialect for a PGlite instance; `lock` is shared with every other user of that instance. */
export class PGliteDialect implements Dialect {
  constructor(
    private readonly pg: PGlite,
    private readonly lock: Lock,
  ) {}
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.pg, this.lock);
  }
  createIntrospector(db: Kysely<any>) {
    return new PostgresIntrospector(db);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
}
