/**
 * A Kysely dialect over PGlite (PostgreSQL compiled to WASM), so the embedded database runs the same
 * SQL as a PostgreSQL server (the embedded default: no database server needed).
 *
 * PGlite is one backend session: every statement shares it. The driver therefore hands out a single
 * connection guarded by a FIFO lock, held from `acquireConnection` to `releaseConnection`, so a
 * transaction never interleaves with another caller's statements. `withLock` lets non-Kysely users
 * (the job queue) take the same lock.
 */
import type { PGlite } from '@electric-sql/pglite';
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

class PGliteConnection implements DatabaseConnection {
  constructor(private readonly pg: PGlite) {}
  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    if (compiled.parameters.length === 0 && /;\s*\S/.test(compiled.sql)) {
      // A multi-statement script (migrations): the simple query protocol.
      const all = await this.pg.exec(compiled.sql);
      return { rows: (all[all.length - 1]?.rows ?? []) as R[] };
    }
    const res = await this.pg.query<R>(compiled.sql, compiled.parameters as unknown[]);
    const affected = res.affectedRows;
    return {
      rows: res.rows,
      ...(affected !== undefined && affected !== null ? { numAffectedRows: BigInt(affected) } : {}),
    };
  }
  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not supported on the embedded database');
  }
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
