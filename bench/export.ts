/**
 * Bench: `GET /api/auth/export` of a populated account (a project with 20,000 chat messages of about 1 KB,
 * 2,000 issues with an entry each, 20,000 activity events, 10,000 usage rows; embedded database, server and
 * client in one process): time to the last byte, document size, and the peak growth of the JS heap while it
 * streams — against a baseline measured in the same run that does the same work but reads each table in one query:
 * a bare Fastify route (no auth hook, schema or logging) in the same process, on the same database, reading the same
 * rows in one query each, serializing the document in memory and sending it over HTTP as the export does (no
 * compression on either side), the client reading every byte (what an export that builds the document in memory
 * would hold).
 * Run: npx tsx bench/export.ts   (EXPORT_MESSAGES to change the message count)
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { startBenchServer } from './setup.ts';
import Fastify from 'fastify';
import { benchLine } from './lib/util.ts';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const MESSAGES = Number(process.env.EXPORT_MESSAGES ?? 20_000);
const s = await startBenchServer('export');
const user = (await s.db.selectFrom('users').select('id').executeTakeFirstOrThrow()).id;
const worker = await s.db
  .insertInto('workers')
  .values({ project_id: s.projectId, label: 'dev' })
  .returning('id')
  .executeTakeFirstOrThrow();
const text = 'The export streams every section of the account row by row. '.repeat(17);
for (let from = 0; from < MESSAGES; from += 1000) {
  const n = Math.min(1000, MESSAGES - from);
  await s.db
    .insertInto('chat_messages')
    .values(
      Array.from({ length: n }, (_, i) => ({
        project_id: s.projectId,
        user_id: user,
        worker_id: worker.id,
        role: i % 2 ? ('assistant' as const) : ('user' as const),
        content: `${from + i} ${text}`,
      })),
    )
    .execute();
  await s.db
    .insertInto('activity_log')
    .values(Array.from({ length: n }, () => ({ type: 'browser_chat_message', user_id: user, project_id: s.projectId })))
    .execute();
  if (from < 10_000)
    await s.db
      .insertInto('token_usage')
      .values(Array.from({ length: n }, () => ({ user_id: user, project_id: s.projectId, total_tokens: 100 })))
      .execute();
  if (from < 2000) {
    await s.db
      .insertInto('issues')
      .values(
        Array.from({ length: n }, (_, i) => ({ project_id: s.projectId, number: from + i + 1, title: `Issue ${i}` })),
      )
      .execute();
    await s.db
      .insertInto('issue_activity')
      .values(
        Array.from({ length: n }, (_, i) => ({
          project_id: s.projectId,
          issue_number: from + i + 1,
          author: 'bench',
          message: 'created',
        })),
      )
      .execute();
  }
}

/** Run `fn` while sampling the heap every 2 ms. @returns ms and the peak heap growth in bytes. */
async function measure(fn: () => Promise<number>) {
  gc();
  const base = process.memoryUsage().heapUsed;
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 2);
  const t0 = performance.now();
  const bytes = await fn();
  const ms = performance.now() - t0;
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage().heapUsed);
  return { ms, bytes, heap: peak - base };
}

// The baseline's bare route: the same rows in one query each, the document serialized at once, sent over HTTP.
const bare = Fastify({ logger: false });
bare.get('/export', async (_req, reply) => {
  const doc = {
    messages: await s.db.selectFrom('chat_messages').selectAll().where('project_id', '=', s.projectId).execute(),
    activity: await s.db.selectFrom('activity_log').selectAll().where('project_id', '=', s.projectId).execute(),
    token_usage: await s.db.selectFrom('token_usage').selectAll().where('user_id', '=', user).execute(),
    issues: await s.db.selectFrom('issues').selectAll().where('project_id', '=', s.projectId).execute(),
    entries: await s.db.selectFrom('issue_activity').selectAll().where('project_id', '=', s.projectId).execute(),
  };
  return reply.header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(doc));
});
await bare.listen({ host: '127.0.0.1', port: 0 });
const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}`;

/** GET `url` and read every byte. @returns the byte count */
async function download(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
  let bytes = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
  return bytes;
}
const ROUNDS = Number(process.env.EXPORT_ROUNDS ?? 2);
const runs: Array<{ streamed: Awaited<ReturnType<typeof measure>>; inMemory: Awaited<ReturnType<typeof measure>> }> =
  [];
// Alternating rounds (3 exports a day per user: the user's export history is cleared between rounds).
for (let r = 0; r < ROUNDS; r++) {
  await s.db.deleteFrom('export_history').execute();
  const streamed = await measure(() => download(`${s.url}/api/auth/export`, { authorization: `Bearer ${s.token}` }));
  const inMemory = await measure(() => download(`${bareUrl}/export`));
  runs.push({ streamed, inMemory });
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const pick = (k: 'streamed' | 'inMemory') => ({
  ms: median(runs.map((r) => r[k].ms)),
  bytes: runs[0][k].bytes,
  heap: Math.max(...runs.map((r) => r[k].heap)),
});
const streamed = pick('streamed');
const inMemory = pick('inMemory');
await bare.close();

const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
console.log(
  `data export of one account (${MESSAGES} messages, ${MESSAGES} events, 10,000 usage rows, 2,000 issues; embedded database; ${ROUNDS} alternating rounds, median time, largest heap growth):`,
);
console.log(
  `  streamed export:   ${streamed.ms.toFixed(0)} ms, ${mb(streamed.bytes)} MB, peak heap +${mb(streamed.heap)} MB`,
);
console.log(
  `  in-memory baseline (bare route, HTTP): ${inMemory.ms.toFixed(0)} ms, ${mb(inMemory.bytes)} MB, peak heap +${mb(inMemory.heap)} MB`,
);
console.log(
  `  ratio streamed / baseline: time ${(streamed.ms / inMemory.ms).toFixed(2)}, peak heap ${(streamed.heap / inMemory.heap).toFixed(2)}`,
);
benchLine('export', {
  ratio: +(streamed.ms / inMemory.ms).toFixed(2),
  heap_ratio: +(streamed.heap / inMemory.heap).toFixed(2),
  streamed_ms: Math.round(streamed.ms),
  baseline_ms: Math.round(inMemory.ms),
  streamed_heap_mib: +mb(streamed.heap),
  baseline_heap_mib: +mb(inMemory.heap),
  baseline: 'bare route over HTTP: same rows read in one query each, serialized in memory (time: lower is better)',
  aim: 'ratio <= 1.2, flat heap',
});
await s.close();
