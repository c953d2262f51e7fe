/**
 * Bench: `GET /api/auth/export` of a populated account (a project with 20,000 chat messages of about 1 KB,
 * 2,000 issues with an entry each, 20,000 activity events, 10,000 usage rows; embedded database, server and
 * client in one process): time to the last byte, document size, and the peak growth of the JS heap while it
 * streams — against a baseline measured in the same run: the same rows read in one query each and
 * serialized at once (what an export that builds the document in memory would hold).
 * Run: npx tsx bench/export.ts   (EXPORT_MESSAGES to change the message count)
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { startBenchServer } from './setup.ts';
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

const streamed = await measure(async () => {
  const res = await fetch(`${s.url}/api/auth/export`, { headers: { authorization: `Bearer ${s.token}` } });
  if (res.status !== 200) throw new Error(`export answered ${res.status}`);
  let bytes = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
  return bytes;
});
const inMemory = await measure(async () => {
  const doc = {
    messages: await s.db.selectFrom('chat_messages').selectAll().where('project_id', '=', s.projectId).execute(),
    activity: await s.db.selectFrom('activity_log').selectAll().where('project_id', '=', s.projectId).execute(),
    token_usage: await s.db.selectFrom('token_usage').selectAll().where('user_id', '=', user).execute(),
    issues: await s.db.selectFrom('issues').selectAll().where('project_id', '=', s.projectId).execute(),
    entries: await s.db.selectFrom('issue_activity').selectAll().where('project_id', '=', s.projectId).execute(),
  };
  return Buffer.byteLength(JSON.stringify(doc));
});

const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
console.log(
  `data export of one account (${MESSAGES} messages, ${MESSAGES} events, 10,000 usage rows, 2,000 issues; embedded database):`,
);
console.log(
  `  streamed export:   ${streamed.ms.toFixed(0)} ms, ${mb(streamed.bytes)} MB, peak heap +${mb(streamed.heap)} MB`,
);
console.log(
  `  in-memory baseline: ${inMemory.ms.toFixed(0)} ms, ${mb(inMemory.bytes)} MB, peak heap +${mb(inMemory.heap)} MB`,
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
  baseline: 'same rows read in one query each, serialized in memory (time: lower is better)',
  aim: 'ratio <= 1.2, flat heap',
});
await s.close();
