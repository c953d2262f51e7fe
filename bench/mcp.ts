/**
 * Bench: the issue list through the MCP server (`POST /mcp`, JSON-RPC `tools/call` of `issues_list`) against the
 * same list through the REST route (`GET /api/crm/projects/:name/issues`), both with the same access token, on a
 * project with 1,000 issues (status=open, 50 per answer); autocannon against a real listening server (embedded
 * database), 10 s each, 10 connections, and the ratio MCP/REST.
 * Run: npx tsx bench/mcp.ts
 */
import autocannon from 'autocannon';
import { startBenchServer } from './setup.ts';
import { benchLine } from './lib/util.ts';

const ISSUES = 1_000;
const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const statuses = ['open', 'in_progress', 'blocked', 'deferred', 'closed'] as const;

const s = await startBenchServer();
const rows = [];
for (let n = 1; n <= ISSUES; n++)
  rows.push({
    project_id: s.projectId,
    number: n,
    title: `Issue ${n}`,
    description: `Description of issue ${n}`,
    status: statuses[n % 5],
    priority: (['P0', 'P1', 'P2', 'P3'] as const)[n % 4],
    assignee: n % 3 ? `worker-${n % 7}` : null,
  });
await s.db.insertInto('issues').values(rows).execute();
await s.db.insertInto('issue_counters').values({ project_id: s.projectId, last_number: ISSUES }).execute();

// An access token bound to the project, made through the API with the session token.
const made = await fetch(`${s.url}/api/crm/account/tokens`, {
  method: 'POST',
  headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
  body: JSON.stringify({ name: 'bench', scopes: ['read'], project: s.projectName }),
});
const { token } = (await made.json()) as { token: string };
const auth = { authorization: `Bearer ${token}` };

const rpc = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'issues_list', arguments: { status: 'open', limit: 50 } },
});
const mcpHeaders = { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const restPath = `/api/crm/projects/${s.projectName}/issues?status=open&limit=50`;

// Both answer the same 50 issues.
const viaMcp = (await (await fetch(`${s.url}/mcp`, { method: 'POST', headers: mcpHeaders, body: rpc })).json()) as {
  result: { content: Array<{ text: string }> };
};
const mcpList = JSON.parse(viaMcp.result.content[0].text) as { total: number; issues: unknown[] };
const restList = (await (await fetch(`${s.url}${restPath}`, { headers: auth })).json()) as { total: number };
if (mcpList.total !== ISSUES / 5 || mcpList.issues.length !== 50 || restList.total !== mcpList.total)
  throw new Error(`unexpected answers: ${JSON.stringify(viaMcp).slice(0, 200)}`);

const run = (opts: autocannon.Options) => autocannon({ connections: 10, duration: DURATION_S, ...opts });
const mcp = await run({ url: `${s.url}/mcp`, method: 'POST', headers: mcpHeaders, body: rpc });
const rest = await run({ url: `${s.url}${restPath}`, headers: auth });

const line = (r: autocannon.Result) =>
  `${r.requests.average.toFixed(0)} req/s  p50 ${r.latency.p50} ms  p99 ${r.latency.p99} ms  non-2xx ${r.non2xx}  errors ${r.errors}`;
console.log(
  `issue list, ${ISSUES} issues, status=open, 50 per answer, access token, ${DURATION_S} s each, 10 connections, embedded database:`,
);
console.log(`  MCP tools/call issues_list: ${line(mcp)}`);
console.log(`  REST GET …/issues:          ${line(rest)}`);
console.log(
  `  ratio MCP/REST: ${(mcp.requests.average / rest.requests.average).toFixed(2)} (throughput), ${(mcp.latency.p50 / Math.max(1, rest.latency.p50)).toFixed(2)} (p50)`,
);
benchLine('mcp', {
  ratio: +(mcp.requests.average / rest.requests.average).toFixed(2),
  mcp: { rps: Math.round(mcp.requests.average), p50: mcp.latency.p50, p99: mcp.latency.p99 },
  rest: { rps: Math.round(rest.requests.average), p50: rest.latency.p50, p99: rest.latency.p99 },
  baseline: 'the REST route of the same list (same SQL)',
});
await s.close();
