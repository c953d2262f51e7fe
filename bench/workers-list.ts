/**
 * Benchmark: requests per second of `GET /api/crm/projects/:name/workers` (25 workers; full stack:
 * auth hook, access check, service, response schema) against a bare Fastify route running the same SQL
 * query on the same embedded database, in one run. Prints both figures and their ratio (aim ≥ 0.6).
 *
 *   npx tsx bench/workers-list.ts            (5 s per target; BENCH_SECONDS to change)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import autocannon from 'autocannon';
import { loadConfig } from '../server/src/config.ts';
import { openDatabase } from '../server/src/db/database.ts';
import { migrateToLatest } from '../server/src/db/migrate.ts';
import { buildApp } from '../server/src/app.ts';
import { createDeps } from '../server/src/deps.ts';
import { WORKER_COLUMNS } from '../server/src/modules/workers/workers.repo.ts';
import { WORKER_PRESETS } from '../server/src/modules/workers/presets.ts';
import { benchLine } from './lib/util.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const silent: any = {
  info() {},
  warn() {},
  error() {},
  debug() {},
  trace() {},
  fatal() {},
  child: () => silent,
  level: 'silent',
};

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-workers-'));
const database = await openDatabase({ url: 'memory://', dataDir });
await migrateToLatest(database.db);
const config = loadConfig({
  DATA_DIR: dataDir,
  DATABASE_URL: 'memory://',
  BREACH_CHECK_URL: 'off',
  LOG_LEVEL: 'silent',
});
const keys = {
  crmSecret: 'bench-signing-secret-0123456789abcdef',
  secretEncryptionKey: 'bench-encryption-key-0123456789abcdef',
};
const deps = createDeps(config, database, keys, silent);
const app = await buildApp(deps, { logger: false });
await app.listen({ host: '127.0.0.1', port: 0 });
const appUrl = `http://127.0.0.1:${(app.server.address() as any).port}`;

// One user (beta: no limits), one project, 25 workers from the presets.
const db = database.db;
const user = await db
  .insertInto('users')
  .values({
    email: 'bench@example.com',
    password_hash: 'x',
    plan: 'beta',
    email_verified: true,
    chat_id: '1',
    name: null,
  })
  .returning('id')
  .executeTakeFirstOrThrow();
const token = await deps.tokens.sign({ sub: user.id, role: 'user', pv: 0, chat_id: String(user.id) });
const created = await fetch(`${appUrl}/api/crm/projects/create-with-team`, {
  method: 'POST',
  headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  body: JSON.stringify({
    project: { displayName: 'Bench', projectName: 'bench' },
    workers: Array.from({ length: 25 }, (_, i) => ({
      preset: WORKER_PRESETS[i % WORKER_PRESETS.length].id,
      label: `Worker ${i + 1}`,
    })),
  }),
});
if (created.status !== 201) throw new Error(`setup failed: ${created.status} ${await created.text()}`);
const projectId = (await created.json()).project.id as number;

// The bare route: the same query, no auth, no access check, no response schema.
const bare = Fastify({ logger: false });
bare.get('/bare', async () =>
  db
    .selectFrom('workers')
    .select(WORKER_COLUMNS)
    .where('workers.project_id', '=', projectId)
    .orderBy('workers.position')
    .orderBy('workers.id')
    .execute(),
);
await bare.listen({ host: '127.0.0.1', port: 0 });
const bareUrl = `http://127.0.0.1:${(bare.server.address() as any).port}`;

const check = await (
  await fetch(`${appUrl}/api/crm/projects/bench/workers`, { headers: { authorization: `Bearer ${token}` } })
).json();
if (check.workers?.length !== 25) throw new Error('the route did not list 25 workers');

async function run(url: string, headers: Record<string, string> = {}) {
  await autocannon({ url, headers, connections: 10, duration: 1 }); // warm-up
  const r = await autocannon({ url, headers, connections: 10, duration: SECONDS });
  if (r.non2xx || r.errors) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return r;
}

const full = await run(`${appUrl}/api/crm/projects/bench/workers`, { authorization: `Bearer ${token}` });
const base = await run(`${bareUrl}/bare`);
const fmt = (r: autocannon.Result) =>
  `${r.requests.average.toFixed(0)} req/s (p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms)`;
console.log(`GET /api/crm/projects/:name/workers (25 workers): ${fmt(full)}`);
console.log(`bare Fastify route, same SQL query:               ${fmt(base)}`);
console.log(
  `ratio: ${(full.requests.average / base.requests.average).toFixed(2)} (aim >= 0.60; ${SECONDS} s each, 10 connections, embedded database)`,
);

benchLine('workers-list', {
  ratio: +(full.requests.average / base.requests.average).toFixed(2),
  real: { rps: Math.round(full.requests.average), p99: full.latency.p99 },
  bare: { rps: Math.round(base.requests.average), p99: base.latency.p99 },
  baseline: 'bare route, same SQL',
  aim: '>= 0.6',
});
await bare.close();
await app.close();
await database.close();
fs.rmSync(dataDir, { recursive: true, force: true });
