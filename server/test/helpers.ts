/**
 * buildTestApp: the real app over a real database cloned from the migrated template (PGlite by
 * default, PostgreSQL when TEST_DATABASE_URL is set), plus small data factories and an HTTP helper.
 */
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import type { InjectOptions } from 'fastify';
import { loadConfig, type Config } from '../src/config.ts';
import { openDatabase, type Database } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { buildApp, type App } from '../src/app.ts';
import { type AppDeps, createDeps } from '../src/deps.ts';
import { createServices, type Services, type ServicesOptions } from '../src/services.ts';
import { silentLogger as silent } from '../src/lib/logger.ts';
import { hashPassword } from '../src/modules/accounts/accounts.service.ts';

export const TEST_KEYS = {
  crmSecret: 'test-signing-secret-0123456789abcdef',
  secretEncryptionKey: 'test-encryption-key-0123456789abcdef',
};

export interface TestApp {
  app: App;
  deps: AppDeps;
  /** The services of the app's composition root (the same instances the routes call). */
  services: Services;
  db: AppDeps['db'];
  database: Database;
  config: Config;
  dataDir: string;
  close(): Promise<void>;
}

/**
 * A new database on the PostgreSQL test server, cloned from the migrated template, or empty with `empty` (its
 * user migrates it). Named `<template>_t_<random>`, so the global teardown drops it if its test does not.
 * @returns its connection URL and `drop()`
 * @throws on the embedded database
 */
export async function createServerDatabase(opts: { empty?: boolean } = {}): Promise<{
  url: string;
  drop: () => Promise<void>;
}> {
  if (inject('dbKind') !== 'postgres') throw new Error('a server database needs the PostgreSQL test server');
  const serverUrl = inject('serverUrl');
  const template = inject('template');
  const name = `${template}_t_${crypto.randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    // CREATE DATABASE … TEMPLATE needs the template to have no other sessions; retry briefly when another file
    // is cloning.
    for (let i = 0; ; i++) {
      try {
        await admin.query(opts.empty ? `create database ${name}` : `create database ${name} template ${template}`);
        break;
      } catch (err) {
        if (i > 50) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } finally {
    await admin.end();
  }
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: serverUrl });
      await c.connect();
      try {
        await c.query(`drop database if exists ${name} with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** Open a fresh database cloned from the template (each call is independent). */
export async function openTestDatabase(dataDir: string): Promise<{ database: Database; drop: () => Promise<void> }> {
  const kind = inject('dbKind');
  const template = inject('template');
  if (kind === 'pglite') {
    const blob = new Blob([fs.readFileSync(template)]);
    const database = await openDatabase({ url: 'memory://', dataDir, loadDataDir: blob });
    return { database, drop: async () => {} };
  }
  const { url, drop } = await createServerDatabase();
  const database = await openDatabase({ url, dataDir, poolSize: 5 });
  return { database, drop };
}

/** How a test app is built (`buildTestApp`, `appOverDatabase`). */
export interface TestAppOptions {
  env?: Record<string, string>;
  overrides?: Partial<AppDeps>;
  logger?: any;
  /** Options of the composition root (e.g. in-memory document loaders, see knowledge-helpers.ts). */
  services?: ServicesOptions;
  /** Called with the infrastructure before the app starts (bind a test store to the job queue). */
  onDeps?: (deps: AppDeps) => void;
}

/**
 * Build the app for a test file.
 * @param opts.env extra environment (validated by the real config schema); BREACH_CHECK_URL defaults to off.
 * @param opts.overrides providers to swap (stand-ins), as `createDeps` takes them.
 */
export async function buildTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = fs.mkdtempSync(path.join(path.resolve('.tmp'), 'data-'));
  const { database, drop } = await openTestDatabase(dataDir);
  return appOverDatabase(dataDir, database, {
    ...opts,
    async onClose() {
      await drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  });
}

/**
 * The app over an open `database` and `dataDir`, as `npm start` builds it (a restart or a restore reuses them).
 * `close()` closes the app and the database, then runs `opts.onClose`. The keys are the test keys unless given.
 */
export async function appOverDatabase(
  dataDir: string,
  database: Database,
  opts: TestAppOptions & { keys?: Parameters<typeof createDeps>[2]; onClose?: () => Promise<void> } = {},
): Promise<TestApp> {
  const config = loadConfig({ DATA_DIR: dataDir, BREACH_CHECK_URL: 'off', APP_URL: 'http://app.test', ...opts.env });
  const log = opts.logger ?? silent;
  const deps = createDeps(config, database, opts.keys ?? TEST_KEYS, log, opts.overrides);
  opts.onDeps?.(deps);
  const services = createServices(deps, opts.services);
  const app = await buildApp(deps, {
    services,
    ...(opts.logger ? { loggerInstance: opts.logger } : { logger: false }),
  });
  await app.ready();
  return {
    app,
    deps,
    services,
    db: database.db,
    database,
    config,
    dataDir,
    async close() {
      await app.close();
      await database.close();
      await opts.onClose?.();
    },
  };
}

export interface Res<T = any> {
  status: number;
  body: T;
  headers: Record<string, any>;
  text: string;
}

/** One HTTP request through the app (no socket). JSON bodies are sent as JSON. */
export async function api<T = any>(
  app: App,
  method: InjectOptions['method'],
  url: string,
  opts: { token?: string; body?: unknown; headers?: Record<string, string>; payload?: string | Buffer } = {},
): Promise<Res<T>> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let payload: string | Buffer | undefined = opts.payload;
  if (opts.body !== undefined) {
    payload = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await app.inject({ method, url, headers, payload });
  let body: any = res.body;
  if ((res.headers['content-type'] ?? '').toString().includes('json')) {
    try {
      body = res.json();
    } catch {
      /* keep text */
    }
  }
  return { status: res.statusCode, body, headers: res.headers, text: res.body };
}

let seq = 0;
/** A unique e-mail for this process. */
export const uniqueEmail = (prefix = 'user') => `${prefix}.${process.pid}.${Date.now()}.${++seq}@example.com`;

/**
 * Create a user directly in the database and sign a token for it.
 * @returns the user id, e-mail, password and a valid bearer token.
 */
export async function createUser(
  t: TestApp,
  opts: { role?: 'user' | 'admin'; plan?: string; email_verified?: boolean; email?: string; password?: string } = {},
): Promise<{ id: number; email: string; password: string; token: string }> {
  const email = opts.email ?? uniqueEmail(opts.role ?? 'user');
  const password = opts.password ?? 'correct horse battery';
  const row = await t.db
    .insertInto('users')
    .values({
      email,
      password_hash: await hashPassword(password),
      role: opts.role ?? 'user',
      plan: opts.plan ?? 'free',
      email_verified: opts.email_verified ?? true,
      chat_id: null,
      name: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await t.db
    .updateTable('users')
    .set({ chat_id: String(row.id) })
    .where('id', '=', row.id)
    .execute();
  const token = await t.deps.tokens.sign({ sub: row.id, role: opts.role ?? 'user', pv: 0, chat_id: String(row.id) });
  return { id: row.id, email, password, token };
}

/**
 * Create a project row and its working directory directly (for areas that need a project to exist).
 * @returns the project id, name and directory.
 */
export async function createProject(
  t: TestApp,
  ownerId: number,
  name = `p${++seq}`,
): Promise<{ id: number; name: string; dir: string }> {
  const row = await t.db
    .insertInto('projects')
    .values({ owner_id: ownerId, name, display_name: name })
    .returning('id')
    .executeTakeFirstOrThrow();
  const dir = t.deps.access.projectDir(row.id);
  fs.mkdirSync(dir, { recursive: true });
  return { id: row.id, name, dir };
}

/**
 * A multipart/form-data body for `api(..., {payload, headers})`.
 * Parts with `filename` are files; others are fields.
 */
export function multipartBody(
  parts: Array<{ name: string; value: string | Buffer; filename?: string; contentType?: string }>,
): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----test${crypto.randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined)
      head += `; filename="${p.filename}"\r\nContent-Type: ${p.contentType ?? 'application/octet-stream'}`;
    chunks.push(
      Buffer.from(`${head}\r\n\r\n`),
      Buffer.isBuffer(p.value) ? p.value : Buffer.from(p.value),
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** Tiny valid image headers for upload tests (signatures only; enough for magic-byte checks). */
export const IMAGES = {
  png: Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 1)]),
  gif: Buffer.concat([Buffer.from('GIF89a', 'latin1'), Buffer.alloc(64, 1)]),
  jpeg: Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(64, 1)]),
  webp: Buffer.concat([
    Buffer.from('RIFF', 'latin1'),
    Buffer.from([64, 0, 0, 0]),
    Buffer.from('WEBPVP8 ', 'latin1'),
    Buffer.alloc(64, 1),
  ]),
};

/** One instance of a cluster: its app (listening on 127.0.0.1) over its own pool of the shared database. */
export interface TestInstance extends TestApp {
  /** `http://127.0.0.1:<port>` of this instance. */
  url: string;
}

/**
 * Open `n` separate connection pools on ONE new database of the PostgreSQL test server (as `n` instances
 * would), cloned from the migrated template, or empty with `empty` (the caller migrates).
 * @throws on the embedded database, which belongs to one process.
 */
export async function openSharedTestDatabase(
  dataDir: string,
  n: number,
  opts: { empty?: boolean } = {},
): Promise<{ databases: Database[]; drop: () => Promise<void> }> {
  if (inject('dbKind') !== 'postgres') throw new Error('several instances need the PostgreSQL test server');
  const { url, drop } = await createServerDatabase(opts);
  const databases = await Promise.all(Array.from({ length: n }, () => openDatabase({ url, dataDir, poolSize: 5 })));
  return { databases, drop };
}

/**
 * `n` instances of the app over one PostgreSQL test database and one DATA_DIR, with the same keys, each with
 * its own pool, event bus, job queue and caches, started together (`ready` at the same moment) and listening
 * on 127.0.0.1, as several processes behind a load balancer would be.
 * @param opts.env environment of every instance; `opts.overrides(i, database)` providers of instance `i`;
 *   `opts.services(i)` options of its composition root.
 * @param opts.empty start on an empty database: the instances migrate it concurrently first.
 */
export async function buildTestCluster(
  n: number,
  opts: {
    env?: Record<string, string>;
    services?: (i: number) => ServicesOptions;
    overrides?: (i: number, database: Database) => Partial<AppDeps>;
    empty?: boolean;
  } = {},
): Promise<{ instances: TestInstance[]; dataDir: string; close(): Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(path.resolve('.tmp'), 'data-'));
  const { databases, drop } = await openSharedTestDatabase(dataDir, n, { empty: opts.empty });
  if (opts.empty) await Promise.all(databases.map((d) => migrateToLatest(d.db)));
  const config = loadConfig({ DATA_DIR: dataDir, BREACH_CHECK_URL: 'off', APP_URL: 'http://app.test', ...opts.env });
  const instances = await Promise.all(
    databases.map(async (database, i) => {
      const deps = createDeps(config, database, TEST_KEYS, silent, opts.overrides?.(i, database));
      const services = createServices(deps, opts.services?.(i));
      const app = await buildApp(deps, { services, logger: false });
      await app.ready();
      const url = await app.listen({ port: 0, host: '127.0.0.1' });
      return { app, deps, services, db: database.db, database, config, dataDir, url };
    }),
  );
  const closeOne = async (t: (typeof instances)[number]) => {
    await t.app.close();
    await t.database.close();
  };
  return {
    instances: instances.map((t) => ({ ...t, close: () => closeOne(t) })),
    dataDir,
    async close() {
      await Promise.all(instances.map(closeOne));
      await drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
