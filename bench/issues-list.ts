/**
 * Bench: `GET /api/crm/projects/:name/issues?status=open&limit=50&offset=…` on a project with 10,000 issues,
 * autocannon against a real listening server (embedded database), 10 s, 10 connections.
 * Run: npx tsx bench/issues-list.ts
 */
import autocannon from 'autocannon';
import { startBenchServer } from './setup.ts';

const ISSUES = 10_000;
const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const statuses = ['open', 'in_progress', 'blocked', 'deferred', 'closed'] as const;

const s = await startBenchServer();
for (let from = 1; from <= ISSUES; from += 1000) {
  const rows = [];
  for (let n = from; n < from + 1000 && n <= ISSUES; n++) {
    rows.push({ project_id: s.projectId, number: n, title: `Issue ${n}`, description: `Description of issue ${n}`, status: statuses[n % 5], priority: (['P0', 'P1', 'P2', 'P3'] as const)[n % 4], assignee: n % 3 ? `worker-${n % 7}` : null });
  }
  await s.db.insertInto('issues').values(rows).execute();
}
await s.db.insertInto('issue_counters').values({ project_id: s.projectId, last_number: ISSUES }).execute();

const path = `/api/crm/projects/${s.projectName}/issues`;
const check = await fetch(`${s.url}${path}?status=open&limit=50`, { headers: { authorization: `Bearer ${s.token}` } });
const body = (await check.json()) as { total: number; issues: unknown[] };
if (check.status !== 200 || body.total !== ISSUES / 5 || body.issues.length !== 50) throw new Error(`unexpected answer ${check.status} ${JSON.stringify(body).slice(0, 200)}`);

let i = 0;
const result = await autocannon({
  url: s.url,
  connections: 10,
  duration: DURATION_S,
  headers: { authorization: `Bearer ${s.token}` },
  requests: [{ method: 'GET', setupRequest: (req: any) => ({ ...req, path: `${path}?status=open&limit=50&offset=${(i++ % 40) * 50}` }) }],
});
console.log(`issue list (10,000 issues, status=open, 50 per page, ${DURATION_S} s, 10 connections, embedded database):`);
console.log(`  requests/s: ${result.requests.average.toFixed(0)}  p50: ${result.latency.p50} ms  p99: ${result.latency.p99} ms  non-2xx: ${result.non2xx}  errors: ${result.errors}`);
await s.close();
