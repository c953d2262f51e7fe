/**
 * Bench: research notes.
 *  1. Chunked upload of a large file (default 1 GiB; `NOTES_BENCH_BYTES` for quick runs) through the real routes
 *     of a listening server (embedded database): throughput as a ratio against writing the same bytes to disk
 *     in the same run, and peak resident memory above the level before the upload (server and client share
 *     this process, so the figure covers both).
 *  2. Source processing rate: 100 Markdown sources added through the multipart route, time until all are done.
 * Run: npx tsx bench/notes.ts
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { startBenchServer } from './setup.ts';
import { benchLine } from './lib/util.ts';

const SIZE = Number(process.env.NOTES_BENCH_BYTES ?? 1024 * 1024 * 1024);
const SOURCES = 100;
const mb = (n: number) => (n / 1024 / 1024).toFixed(1);

const s = await startBenchServer('notes');
const auth = { authorization: `Bearer ${s.token}` };
const base = `${s.url}/api/crm/projects/notes/notes`;
const note = (await (
  await fetch(base, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'bench' }),
  })
).json()) as { id: number };

const init = (await (
  await fetch(`${base}/${note.id}/sources/chunk-init`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ filename: 'big.mp4', mime: 'video/mp4', size: SIZE }),
  })
).json()) as { upload_id: string; chunk_size: number };
const chunk = Buffer.alloc(init.chunk_size, 7);

// Baseline: the same bytes, in the same chunks, written to a file on the same disk.
const scratch = path.join(os.tmpdir(), `crm-bench-baseline-${process.pid}.bin`);
let t0 = performance.now();
{
  let left = SIZE;
  const src = Readable.from(
    (function* () {
      while (left > 0) {
        const n = Math.min(left, chunk.length);
        left -= n;
        yield n === chunk.length ? chunk : chunk.subarray(0, n);
      }
    })(),
  );
  await pipeline(src, fs.createWriteStream(scratch));
}
const diskMs = performance.now() - t0;
fs.rmSync(scratch, { force: true });

// The chunked upload through the routes.
let peak = process.memoryUsage().rss;
const idle = peak;
const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
t0 = performance.now();
let sent = 0;
let last: { status: number; body: unknown } = { status: 0, body: null };
for (let i = 0; sent < SIZE; i++) {
  const n = Math.min(init.chunk_size, SIZE - sent);
  const res = await fetch(`${base}/${note.id}/sources/chunks/${init.upload_id}`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/octet-stream', 'x-chunk-index': String(i) },
    body: n === chunk.length ? chunk : chunk.subarray(0, n),
  });
  last = { status: res.status, body: await res.json() };
  if (res.status !== 200 && res.status !== 201)
    throw new Error(`chunk ${i}: ${res.status} ${JSON.stringify(last.body)}`);
  sent += n;
}
const uploadMs = performance.now() - t0;
clearInterval(timer);
peak = Math.max(peak, process.memoryUsage().rss);
const rate = (ms: number) => ((SIZE / 1024 / 1024) * 1000) / ms;
console.log(
  `chunked upload of ${mb(SIZE)} MB in ${Math.ceil(SIZE / init.chunk_size)} chunks of ${mb(init.chunk_size)} MB:`,
);
console.log(
  `  routes: ${uploadMs.toFixed(0)} ms (${rate(uploadMs).toFixed(0)} MB/s)  disk write: ${diskMs.toFixed(0)} ms (${rate(diskMs).toFixed(0)} MB/s)  ratio routes/disk throughput: ${(diskMs / uploadMs).toFixed(2)}`,
);
console.log(
  `  peak RSS ${mb(peak)} MB, +${mb(peak - idle)} MB over the ${mb(idle)} MB before the upload  last answer ${last.status} ${JSON.stringify(last.body)}`,
);

// Processing rate: 100 Markdown sources.
const ids: number[] = [];
t0 = performance.now();
for (let i = 0; i < SOURCES; i++) {
  const form = new FormData();
  form.append(
    'file',
    new Blob([`# Source ${i}\n\n${'Notes about the heron survey and its counts. '.repeat(40)}\n`]),
    `s${i}.md`,
  );
  const res = await fetch(`${base}/${note.id}/sources`, { method: 'POST', headers: auth, body: form });
  ids.push(((await res.json()) as { source_id: number }).source_id);
}
const addedMs = performance.now() - t0;
for (;;) {
  const left = await s.db
    .selectFrom('note_sources')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('id', 'in', ids)
    .where('status', 'in', ['queued', 'processing'])
    .executeTakeFirstOrThrow();
  if (Number(left.n) === 0) break;
  await new Promise((r) => setTimeout(r, 20));
}
const allMs = performance.now() - t0;
const done = await s.db
  .selectFrom('note_sources')
  .select((eb) => eb.fn.countAll<number>().as('n'))
  .where('id', 'in', ids)
  .where('status', '=', 'done')
  .executeTakeFirstOrThrow();
console.log(
  `${SOURCES} Markdown sources: added in ${addedMs.toFixed(0)} ms, all processed after ${allMs.toFixed(0)} ms (${((SOURCES * 1000) / allMs).toFixed(1)} sources/s; ${done.n} done)`,
);
benchLine('notes', {
  upload_ratio: +(diskMs / uploadMs).toFixed(2),
  upload_peak_rss_growth_mib: +mb(peak - idle),
  sources_per_s: +((SOURCES * 1000) / allMs).toFixed(1),
  baseline: 'writing the same bytes to disk (throughput: higher is better)',
});
await s.close();
