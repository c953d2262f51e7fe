/**
 * Bench: `GET /api/crm/projects/:name/wiki/download` of a wiki with 1,000 pages (about 8 KB each) from a real
 * listening server (embedded database): time to the last byte, archive size, and peak resident memory.
 * Run: npx tsx bench/wiki-zip.ts
 */
import { startBenchServer } from './setup.ts';
import { benchLine } from './lib/util.ts';

const PAGES = 1000;
const s = await startBenchServer('wiki');
const para = 'The quick brown fox jumps over the lazy dog while the wiki keeps growing. ';
for (let from = 0; from < PAGES; from += 100) {
  const rows = [];
  for (let n = from; n < from + 100; n++) {
    rows.push({
      project_id: s.projectId,
      path: `section-${n % 10}/page-${n}.md`,
      title: `Page ${n}`,
      content: `# Page ${n}\n\n${para.repeat(110)}\n${n}`,
    });
  }
  await s.db.insertInto('wiki_pages').values(rows).execute();
}

let peak = process.memoryUsage().rss;
const baseline = peak;
const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
const t0 = performance.now();
const res = await fetch(`${s.url}/api/crm/projects/wiki/wiki/download`, {
  headers: { authorization: `Bearer ${s.token}` },
});
let bytes = 0;
for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
const ms = performance.now() - t0;
clearInterval(timer);
peak = Math.max(peak, process.memoryUsage().rss);
const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
console.log(
  `wiki ZIP download (${PAGES} pages, ${mb(PAGES * 8300)} MB of text, embedded database, server and client in one process):`,
);
console.log(
  `  status ${res.status}  time: ${ms.toFixed(0)} ms  zip: ${mb(bytes)} MB  peak RSS: ${mb(peak)} MB (before the download: ${mb(baseline)} MB, +${mb(peak - baseline)} MB)`,
);
benchLine('wiki-zip', {
  ms: Math.round(ms),
  zip_mib: +mb(bytes),
  peak_rss_growth_mib: +mb(peak - baseline),
  baseline: 'none (absolute figures)',
});
await s.close();
