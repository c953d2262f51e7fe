/**
 * Backup and restore (docs/operations.md, Backup and restore): one `.tar.gz` holding
 *  - `manifest.json`: the format, the service's release, when, and which database it came from;
 *  - `database.sql`: a logical dump in plain SQL (no COPY blocks: `--rows-per-insert`), every schema — the
 *    service's tables, the migration history and the job queue. The embedded database is dumped by PGlite's own
 *    pg_dump (the service must be stopped: the embedded database belongs to one process); a PostgreSQL server by
 *    the system's `pg_dump` (Debian's `postgresql-client`, of the server's major or newer), while it serves;
 *  - `data/`: the files of `DATA_DIR` — `keys.json` (the keys that sign tokens and seal the stored secrets),
 *    project folders, blobs, skills, transcripts, cloud homes — without the embedded database's own folder
 *    (`pgdata/`, in the dump instead), its lock and `tmp/`.
 *
 * A restore goes into a new `DATA_DIR` (no `keys.json`, no `pgdata/`) and an empty database: the embedded one is
 * created there, or the server database named by `DATABASE_URL` must have no table yet. Because the dump is
 * logical, a backup of the embedded database restores into a PostgreSQL server of the same or a newer major, and
 * into a later release's embedded database on a newer PostgreSQL major.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import pg from 'pg';
import * as tar from 'tar';
import { openDatabase } from '../db/database.ts';
import { SERVICE_VERSION } from '../lib/version.ts';

/** What `manifest.json` says about a backup. */
export interface BackupManifest {
  format: 1;
  /** The release that made it (package.json `version`). */
  service_version: string;
  created_at: string;
  /** Where the dump came from: `pglite` (embedded) or `postgres` (a server). */
  database: 'pglite' | 'postgres';
  /** Files of DATA_DIR in the archive. */
  files: number;
}

/** A backup or restore that cannot be done as asked (one line for the operator). */
export class BackupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupError';
  }
}

/** Entries of DATA_DIR that are not copied: the embedded database (dumped instead), its lock, temporary files. */
const SKIPPED = new Set(['pgdata', 'pgdata.lock', 'tmp']);

const isServerUrl = (url: string | undefined): url is string => !!url && /^postgres(ql)?:\/\//.test(url);

/** The system's pg_dump of `url` written to `file` (plain SQL). @throws BackupError when it is missing or fails. */
async function serverDump(url: string, file: string): Promise<void> {
  const out = fs.createWriteStream(file, { mode: 0o600 });
  const child = spawn(
    'pg_dump',
    ['--no-owner', '--no-privileges', '--rows-per-insert=500', '--quote-all-identifiers', '--dbname', url],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  try {
    await pipeline(child.stdout, out);
    const code = await exited;
    if (code !== 0) throw new BackupError(`pg_dump failed: ${stderr.trim().split('\n').pop() ?? `exit ${code}`}`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      throw new BackupError('pg_dump is not installed: install the PostgreSQL client (Debian: postgresql-client).');
    throw err;
  }
}

/** Files under `dir`, recursively (symbolic links count as files; they are archived as links). */
async function countFiles(dir: string, entries: string[]): Promise<number> {
  let n = 0;
  for (const e of entries) {
    const p = path.join(dir, e);
    const st = await fsp.lstat(p);
    if (st.isDirectory()) n += await countFiles(p, await fsp.readdir(p));
    else n++;
  }
  return n;
}

/**
 * Write a backup of `dataDir` and its database to `out` (mode 0600; its folder is created).
 * @param opts.databaseUrl unset: the embedded database in `dataDir/pgdata` (the service must be stopped);
 *   `postgres://…`: that server (through `pg_dump`).
 * @throws BackupError (nothing to back up, pg_dump missing or failing, the embedded database in use — then the
 *   message names the process holding it), or the file system's errors.
 */
export async function createBackup(opts: {
  dataDir: string;
  databaseUrl: string | undefined;
  out: string;
}): Promise<BackupManifest> {
  const { dataDir } = opts;
  if (opts.databaseUrl?.startsWith('memory://')) throw new BackupError('An in-memory database cannot be backed up.');
  if (!fs.existsSync(dataDir)) throw new BackupError(`DATA_DIR ${dataDir} does not exist.`);
  const server = isServerUrl(opts.databaseUrl);
  if (!server && !fs.existsSync(path.join(dataDir, 'pgdata', 'PG_VERSION')))
    throw new BackupError(`DATA_DIR ${dataDir} holds no embedded database (pgdata/); set DATABASE_URL for a server.`);
  const stage = await fsp.mkdtemp(path.join(os.tmpdir(), 'crm-backup-'));
  try {
    const sqlFile = path.join(stage, 'database.sql');
    if (server) await serverDump(opts.databaseUrl!, sqlFile);
    else {
      // Takes DATA_DIR's lock: refused while the service runs on it.
      const database = await openDatabase({ url: undefined, dataDir });
      try {
        await fsp.writeFile(sqlFile, await database.sqlDump!(), { mode: 0o600 });
      } finally {
        await database.close();
      }
    }
    const entries = (await fsp.readdir(dataDir)).filter((e) => !SKIPPED.has(e)).sort();
    const manifest: BackupManifest = {
      format: 1,
      service_version: SERVICE_VERSION,
      created_at: new Date().toISOString(),
      database: server ? 'postgres' : 'pglite',
      files: await countFiles(dataDir, entries),
    };
    await fsp.writeFile(path.join(stage, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    // One tar: the manifest and the dump from the staging folder, then DATA_DIR's entries under `data/`.
    const plain = path.join(stage, 'backup.tar');
    await tar.create({ file: plain, cwd: stage, portable: true }, ['manifest.json', 'database.sql']);
    if (entries.length) await tar.replace({ file: plain, cwd: dataDir, prefix: 'data' }, entries);
    await fsp.mkdir(path.dirname(path.resolve(opts.out)), { recursive: true });
    const partial = `${opts.out}.partial`;
    await pipeline(fs.createReadStream(plain), zlib.createGzip(), fs.createWriteStream(partial, { mode: 0o600 }));
    await fsp.rename(partial, opts.out);
    return manifest;
  } finally {
    await fsp.rm(stage, { recursive: true, force: true });
  }
}

/**
 * Restore the backup `file` into a new `dataDir` and an empty database.
 * @param opts.databaseUrl unset: a new embedded database in `dataDir/pgdata`; `postgres://…`: that server's
 *   database, which must have no table yet.
 * @returns the backup's manifest.
 * @throws BackupError (not a backup, `dataDir` already in use, the server database not empty, the dump refused).
 */
export async function restoreBackup(opts: {
  file: string;
  dataDir: string;
  databaseUrl: string | undefined;
}): Promise<BackupManifest> {
  const { dataDir } = opts;
  if (!fs.existsSync(opts.file)) throw new BackupError(`${opts.file} does not exist.`);
  for (const taken of ['keys.json', 'pgdata'])
    if (fs.existsSync(path.join(dataDir, taken)))
      throw new BackupError(`DATA_DIR ${dataDir} is in use (it has ${taken}): restore into a new, empty folder.`);
  const server = isServerUrl(opts.databaseUrl);
  if (opts.databaseUrl?.startsWith('memory://'))
    throw new BackupError('Restore into an in-memory database is pointless.');
  const stage = await fsp.mkdtemp(path.join(os.tmpdir(), 'crm-restore-'));
  try {
    await tar.extract({ file: opts.file, cwd: stage, filter: (p) => p === 'manifest.json' || p === 'database.sql' });
    let manifest: BackupManifest;
    try {
      manifest = JSON.parse(await fsp.readFile(path.join(stage, 'manifest.json'), 'utf8')) as BackupManifest;
    } catch {
      throw new BackupError(`${opts.file} is not a backup of this service (no manifest.json).`);
    }
    if (manifest.format !== 1) throw new BackupError(`Backup format ${manifest.format} is not known to this release.`);
    // pg_dump's `\restrict` / `\unrestrict` lines are psql meta-commands (psql refuses other meta-commands between
    // them); the dump is run here as plain SQL, where no meta-command is ever interpreted, so they are dropped.
    const sql = (await fsp.readFile(path.join(stage, 'database.sql'), 'utf8')).replace(/^\\(un)?restrict .*$/gm, '');

    if (server) {
      const client = new pg.Client({ connectionString: opts.databaseUrl });
      await client.connect();
      try {
        const r = await client.query(
          "select count(*)::int as n from information_schema.tables where table_schema not in ('pg_catalog', 'information_schema')",
        );
        if (r.rows[0].n > 0)
          throw new BackupError('The database of DATABASE_URL already has tables: restore into an empty database.');
        await client.query(sql);
      } catch (err) {
        if (err instanceof BackupError) throw err;
        throw new BackupError(`The database refused the dump: ${(err as Error).message}`);
      } finally {
        await client.end();
      }
    } else {
      await fsp.mkdir(dataDir, { recursive: true });
      // An empty database for the dump: never the migrated seed image (its tables and job queue would collide).
      const database = await openDatabase({ url: undefined, dataDir, seed: false });
      try {
        await database.execScript!(sql);
      } catch (err) {
        throw new BackupError(`The embedded database refused the dump: ${(err as Error).message}`);
      } finally {
        await database.close();
      }
    }
    await fsp.mkdir(dataDir, { recursive: true });
    await tar.extract({ file: opts.file, cwd: dataDir, strip: 1, filter: (p) => p.startsWith('data/') });
    return manifest;
  } finally {
    await fsp.rm(stage, { recursive: true, force: true });
  }
}

/** Whether the system has a pg_dump (for messages and tests). */
export const hasPgDump = (): Promise<boolean> =>
  new Promise((resolve) => execFile('pg_dump', ['--version'], (err) => resolve(!err)));
