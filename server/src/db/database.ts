/**
 * The data-access layer's connection: one Kysely instance over either a PostgreSQL server (`pg` pool)
 * or the embedded PGlite (with pgvector), chosen by `DATABASE_URL` (docs/configuration.md).
 */
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import fs from 'node:fs';
import module from 'node:module';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { DB } from './types.ts';
import type { PGlite as PGliteType } from '@electric-sql/pglite';
import { lockDataDir } from './data-dir-lock.ts';
import { schemaKey, seedPath, unpackSeed, writeSeed } from './pglite-seed.ts';
import { migrations } from './migrations/index.ts';
import { Lock, PGLITE_SESSION_PARAMS, PGliteDialect, Statements } from './pglite-dialect.ts';
import { assertNoOpenTransaction, GuardedKysely } from './tx-guard.ts';

export interface Database {
  db: Kysely<DB>;
  kind: 'pglite' | 'postgres';
  /** Where the embedded database lives ('memory' for a throw-away one); undefined on a server. */
  location?: string;
  /** True when the pgvector extension is installed (decided at open; see `detectVector`). */
  vector: boolean;
  /** Connections of this process: the pool's size, idle ones and callers waiting (the embedded database has one). */
  poolStats(): { total: number; idle: number; waiting: number };
  /**
   * Raw SQL for libraries that bring their own statements (the job queue). Multi-statement text is allowed without
   * values; its answer holds the rows of every statement, in order.
   */
  executeSql(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
  /** Embedded only: the data directory as an uncompressed tarball (tests clone a template this way). */
  dump?(): Promise<Blob>;
  /**
   * Embedded only: a logical dump as plain SQL (PGlite's own pg_dump, `--rows-per-insert`, no COPY blocks), which
   * PGlite and a PostgreSQL server of the same or a newer major can run (docs/operations.md, Backup and restore).
   */
  sqlDump?(): Promise<string>;
  /** Embedded only: run a multi-statement SQL script (a restore) under the connection's lock. */
  execScript?(sql: string): Promise<void>;
  /**
   * Server only: a new connection outside the pool, not yet connected, for a session that stays open
   * (the event bus's LISTEN). The caller connects and ends it.
   */
  dedicatedClient?(): pg.Client;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** `undefined` → embedded at `<dataDir>/pgdata`; `memory://` → in memory; `postgres://…` → server. */
  url: string | undefined;
  dataDir: string;
  /** Embedded only: a data-dir tarball to start from (tests clone a migrated template this way). */
  loadDataDir?: Blob;
  /**
   * Embedded on disk only: start a new data directory from a seed image (db/pglite-seed.ts: the migrated one when it
   * matches, else the bare one) instead of running initdb, and write the bare image when there is none yet (default
   * true).
   */
  seed?: boolean;
  /** Server only: pool size (default 10). */
  poolSize?: number;
}

/**
 * Server settings of the embedded database, over PGlite's own start parameters. `shared_buffers`: the 128MB
 * that initdb writes into postgresql.conf are allocated and written inside the WebAssembly memory at start, so
 * they stay resident for the life of the process; with 16MB PGlite alone measured ~180 instead of ~305 MiB RSS
 * and opened in ~0.65 instead of ~0.9 s. Pages that do not fit are read again through the operating system's
 * file cache. Applies to a new data directory's initdb run as well.
 */
export const PGLITE_SETTINGS = ['shared_buffers=16MB'];

// int8 → number (ids and counts here stay far below 2^53), as PGlite does.
pg.types.setTypeParser(20, (v) => Number(v));

/**
 * Open the database. For the embedded kind the pgvector extension is always loaded.
 * The embedded kind on disk first takes `DATA_DIR/pgdata.lock` (db/data-dir-lock.ts), released on close.
 * @throws DataDirLockedError when another live process holds the data directory; otherwise when the server is
 * unreachable or the data directory cannot be opened.
 */
export async function openDatabase(opts: OpenOptions): Promise<Database> {
  if (opts.url && /^postgres(ql)?:\/\//.test(opts.url)) {
    const pool = new pg.Pool({ connectionString: opts.url, max: opts.poolSize ?? 10 });
    pool.on('error', () => {}); // idle-client errors are surfaced by the next query
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    await sql`select 1`.execute(db);
    const vector = await detectVector(db);
    return {
      db,
      kind: 'postgres',
      vector,
      poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
      async executeSql(text, values) {
        const client = await pool.connect();
        try {
          const res = await client.query(text, values as any[] | undefined);
          // A multi-statement text answers the rows of every statement in order, as pg-boss's own Db does (its
          // maintenance claim looks for the advisory lock's row among them).
          return { rows: Array.isArray(res) ? res.flatMap((r) => r.rows ?? []) : (res.rows ?? []) };
        } catch (err) {
          // A multi-statement text with its own BEGIN (pg-boss's schema install, which two instances starting
          // together race on) leaves the session inside the aborted transaction: end it before the connection
          // goes back to the pool, or every later query on it fails.
          await client.query('rollback').catch(() => {});
          throw err;
        } finally {
          client.release();
        }
      },
      dedicatedClient: () => new pg.Client({ connectionString: opts.url, keepAlive: true }),
      async close() {
        await db.destroy();
      },
    };
  }
  const memory = opts.url?.startsWith('memory://');
  const dir = memory ? undefined : path.join(opts.dataDir, 'pgdata');
  // One process per data directory: a second one would open the same files and lose writes.
  const dirLock = dir ? lockDataDir(opts.dataDir) : undefined;
  let pglite: PGliteType;
  try {
    const { PGlite } = await import('@electric-sql/pglite');
    const { vector } = await import('@electric-sql/pglite-pgvector');
    const created = dir !== undefined && !opts.loadDataDir && !fs.existsSync(path.join(dir, 'PG_VERSION'));
    const useSeed = created && opts.seed !== false;
    const seedFile = useSeed ? seedPath(PGLITE_SETTINGS) : undefined;
    // The schema image when it matches these migrations, else the bare one, unpacked where the data directory goes
    // (renamed over an empty folder; a folder with files in it is left to initdb, as before).
    const seeded =
      useSeed &&
      dir !== undefined &&
      (unpackSeed(seedPath(PGLITE_SETTINGS, schemaKey(migrations)), dir) || unpackSeed(seedFile, dir));
    const loadDataDir = opts.loadDataDir;
    pglite = await PGlite.create({
      pgliteWasmModule: await compilePgliteWasm(),
      ...(dir ? { dataDir: dir } : {}),
      extensions: { vector },
      ...(loadDataDir ? { loadDataDir } : {}),
      startParams: [
        ...PGlite.defaultStartParams,
        ...PGLITE_SETTINGS.flatMap((s) => ['-c', s]),
        ...PGLITE_SESSION_PARAMS,
      ],
    });
    await pglite.exec('create extension if not exists vector');
    if (created && !seeded) {
      // initdb ran here: keep its result (before any table exists) as the seed image of the next new data directory,
      // frozen and checkpointed so a copy starts without replaying WAL.
      if (seedFile) {
        await pglite.exec('vacuum freeze analyze');
        await pglite.exec('checkpoint');
        await writeSeed(seedFile, await pglite.dumpDataDir('none'));
      }
      collectGarbage();
    } else if (memory && !opts.loadDataDir) {
      // An in-memory database (tests, benches) ran initdb here too: the same ~400 MiB of garbage (bench/runtime.ts
      // ran its 200 runs at ~700 instead of ~560 MiB RSS until V8 happened to collect it).
      collectGarbage();
    }
  } catch (err) {
    dirLock?.release();
    throw err;
  }
  const lock = new Lock();
  const db = new GuardedKysely<DB>({ dialect: new PGliteDialect(pglite, lock) });
  return {
    db,
    kind: 'pglite',
    location: dir ?? 'memory',
    vector: true,
    poolStats: () => ({ total: 1, idle: lock.queued ? 0 : 1, waiting: Math.max(0, lock.queued - 1) }),
    async executeSql(text, values) {
      assertNoOpenTransaction('A raw SQL statement (job queue)');
      return lock.run(async () => {
        if ((!values || values.length === 0) && !Statements.preparable(text)) {
          const results = await pglite.exec(text);
          return { rows: results.flatMap((r) => r.rows ?? []) };
        }
        // As the dialect runs its statements: the job queue's texts (its fetch has its values written in) stay
        // prepared (`Statements`).
        const res = await Statements.of(pglite).run(text, values ?? []);
        return { rows: res.rows as any[] };
      });
    },
    dump: () => lock.run(() => pglite.dumpDataDir('none')),
    sqlDump: () =>
      lock.run(async () => {
        const { pgDump } = await import('@electric-sql/pglite-tools/pg_dump');
        const file = await pgDump({ pg: pglite, args: ['--rows-per-insert=500', '--no-owner', '--no-privileges'] });
        return file.text();
      }),
    execScript: (text) =>
      lock.run(async () => {
        // A script (a restore) may drop and create tables: the prepared statements are prepared again.
        Statements.of(pglite).forgetAll();
        await pglite.exec(text);
      }),
    async close() {
      try {
        await db.destroy();
        await lock.run(() => pglite.close());
      } finally {
        dirLock?.release();
      }
    },
  };
}

/**
 * One full garbage collection, once, after PGlite created a new database by initdb. PGlite runs initdb in a second
 * WebAssembly instance and drops it: ~400 MiB that V8 otherwise frees only at its next major collection, which an
 * idle server may not reach for minutes (idle RSS after a first start measured 370–780 MiB, ~370 with this).
 * `--expose-gc` is switched on for the call only (v8.setFlagsFromString; ~0.1 s).
 */
function collectGarbage(): void {
  v8.setFlagsFromString('--expose-gc');
  try {
    (vm.runInNewContext('gc') as () => void)();
  } finally {
    v8.setFlagsFromString('--no-expose-gc');
  }
}

/**
 * PGlite's WebAssembly module (`pglite.wasm`, 9 MB), compiled here and handed to `PGlite.create`
 * (`pgliteWasmModule`). PGlite would read the file into a buffer of its own and leave it for the garbage collector:
 * a start whose next full collection came late idled with those 9 MB still in the C heap (bench/README.md,
 * "Start-up": `arrayBuffers` 18 instead of 9.8 MiB, idle RSS ~6 MiB higher, in many starts on a new DATA_DIR). Here
 * the buffer is released as soon as V8 has its own copy (detached by `ArrayBuffer.prototype.transfer`).
 */
async function compilePgliteWasm(): Promise<WebAssembly.Module> {
  const pkg = module.findPackageJSON('@electric-sql/pglite', import.meta.url);
  if (!pkg) throw new Error('the @electric-sql/pglite package was not found');
  const bytes = await fs.promises.readFile(path.join(path.dirname(pkg), 'dist', 'pglite.wasm'));
  try {
    return await WebAssembly.compile(bytes);
  } finally {
    // A buffer of its own (not a slice of Node's pool) is freed now rather than at a later full collection.
    if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength)
      (bytes.buffer as ArrayBuffer & { transfer(length: number): ArrayBuffer }).transfer(0);
  }
}

/**
 * Whether pgvector can be used on a server: installed already, or available and creatable.
 * A server without it gets the exact-scan fallback (issue 5).
 */
async function detectVector(db: Kysely<DB>): Promise<boolean> {
  try {
    const have = await sql<{ n: number }>`select count(*)::int as n from pg_extension where extname = 'vector'`.execute(
      db,
    );
    if (have.rows[0].n > 0) return true;
    const avail = await sql<{
      n: number;
    }>`select count(*)::int as n from pg_available_extensions where name = 'vector'`.execute(db);
    if (avail.rows[0].n === 0) return false;
    try {
      await sql`create extension if not exists vector`.execute(db);
    } catch {
      // Another instance starting at the same moment may have created it first (a unique violation on the
      // catalog): what counts is whether it exists now.
      const again = await sql<{
        n: number;
      }>`select count(*)::int as n from pg_extension where extname = 'vector'`.execute(db);
      return again.rows[0].n > 0;
    }
    return true;
  } catch {
    return false;
  }
}
