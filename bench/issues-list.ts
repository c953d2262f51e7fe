/**
 * Bench: `GET /api/crm/projects/:name/issues?status=open&limit=50&offset=…` on a project with 10,000 issues,
 * autocannon against a real listening server (embedded database), 10 s, 10 connections; then, in the same
 * run, a bare Fastify route running the same two queries (page and count) on the same database, and the ratio.
 * Run: npx tsx bench/issues-list.ts
 */
import autocannon from 'autocannon';
import Fastify from 'fastify';
import { createIssuesRepo } from '../server/src/modules/issues/issues.repo.ts';
import { startBenchServer } from './setup.ts';
import { benchLine } from './lib/util.ts';

const ISSUES = 10_000;
const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const statuses = ['open', 'in_progress', 'blocked', 'deferred', 'closed'] as const;

const s = await startBenchServer();
for (let from = 1; from <= ISSUES; from += 1000) {
  const rows = [];
  for (let n = from; n < from + 1000 && n <= ISSUES; n++) {
    rows.push({
      project_id: s.projectId,
      number: n,
      title: `Issue ${n}`,
      description: `Description of issue ${n}`,
      status: statuses[n % 5],
      priority: (['P0', 'P1', 'P2', 'P3'] as const)[n % 4],
      assignee: n % 3 ? `worker-${n % 7}` : null,
    });
  }
  await s.db.insertInto('issues').values(rows).execute();
}
await s.db.insertInto('issue_counters').values({ project_id: s.projectId, last_number: ISSUES }).execute();

const path = `/api/crm/projects/${s.projectName}/issues`;
const check = await fetch(`${s.url}${path}?status=open&limit=50`, { headers: { authorization: `Bearer ${s.token}` } });
const body = (await check.json()) as { total: number; issues: unknown[] };
if (check.status !== 200 || body.total !== ISSUES / 5 || body.issues.length !== 50)
  throw new Error(`unexpected answer ${check.status} ${JSON.stringify(body).slice(0, 200)}`);

let i = 0;
const result = await autocannon({
  url: s.url,
  connections: 10,
  duration: DURATION_S,
  headers: { authorization: `Bearer ${s.token}` },
  requests: [
    {
      method: 'GET',
      setupRequest: (req: any) => ({ ...req, path: `${path}?status=open&limit=50&offset=${(i++ % 40) * 50}` }),
    },
  ],
});

// Baseline: the same page and count queries (the issues repository's) behind a bare route (no auth, access check
// or schema).
const repo = createIssuesRepo(s.db);
const bare = Fastify();
bare.get('/issues', async (req) => {
  const offset = Number((req.query as { offset?: string }).offset ?? 0);
  const { rows, total } = await repo.list(s.projectId, { statuses: ['open'] }, { limit: 50, offset });
  return { issues: rows, total, limit: 50, offset };
});
await bare.listen({ host: '127.0.0.1', port: 0 });
let j = 0;
const baseline = await autocannon({
  url: `http://127.0.0.1:${(bare.server.address() as { port: number }).port}`,
  connections: 10,
  duration: DURATION_S,
  requests: [{ method: 'GET', setupRequest: (req: any) => ({ ...req, path: `/issues?offset=${(j++ % 40) * 50}` }) }],
});
console.log(
  `issue list (10,000 issues, status=open, 50 per page, ${DURATION_S} s each, 10 connections, embedded database):`,
);
console.log(
  `  CRM route:            ${result.requests.average.toFixed(0)} req/s  p50 ${result.latency.p50} ms  p99 ${result.latency.p99} ms  non-2xx ${result.non2xx}  errors ${result.errors}`,
);
console.log(
  `  bare route, same SQL: ${baseline.requests.average.toFixed(0)} req/s  p50 ${baseline.latency.p50} ms  p99 ${baseline.latency.p99} ms`,
);
console.log(
  `  ratio CRM/bare: ${(result.requests.average / baseline.requests.average).toFixed(2)} (throughput), ${(result.latency.p99 / Math.max(1, baseline.latency.p99)).toFixed(2)} (p99)`,
);
benchLine('issues-list', {
  ratio: +(result.requests.average / baseline.requests.average).toFixed(2),
  p99_ratio: +(result.latency.p99 / Math.max(1, baseline.latency.p99)).toFixed(2),
  real: { rps: Math.round(result.requests.average), p99: result.latency.p99 },
  bare: { rps: Math.round(baseline.requests.average), p99: baseline.latency.p99 },
  baseline: 'bare route, same SQL (page and count)',
});
await bare.close();
await s.close();
