/**
 * Benchmark (issues 2 and 10): time from starting the server (`node server/start.js`, what `npm start`
 * runs) to `/readyz` answering 200, on a new and on an existing embedded database (DATA_DIR in a temp
 * dir); resident memory at idle after start; time to exit after SIGTERM. The server logs where its start
 * went (`started` line: `steps` in ms) at LOG_LEVEL=info.
 *
 *   npx tsx bench/startup.ts          (BENCH_RUNS starts per case, default 3; BENCH_IDLE_MS before reading RSS, default 3000)
 */
import fs from 'node:fs';
import { median, rssMiB, startNode, stop, table, tempDir } from './lib/util.ts';

const runs = Number(process.env.BENCH_RUNS ?? 3);
const idleMs = Number(process.env.BENCH_IDLE_MS ?? 3000);
const env = (dataDir: string) => ({ DATA_DIR: dataDir, LOG_LEVEL: 'warn', BREACH_CHECK_URL: 'off' });

interface Sample {
  readyMs: number;
  rss: number;
  stopMs: number;
  code: number | null;
}

async function once(dataDir: string): Promise<Sample> {
  const s = await startNode('server/start.js', env(dataDir));
  await new Promise((r) => setTimeout(r, idleMs));
  const rss = rssMiB(s.proc.pid!);
  const { code, ms } = await stop(s.proc);
  if (code !== 0) throw new Error(`exit code ${code}: ${s.output()}`);
  return { readyMs: s.readyMs, rss, stopMs: ms, code };
}

const fresh: Sample[] = [];
const existing: Sample[] = [];
const dirs: string[] = [];
try {
  for (let i = 0; i < runs; i++) {
    const dir = tempDir('startup');
    dirs.push(dir);
    fresh.push(await once(dir)); // initdb, migrations, job-queue schema
    existing.push(await once(dir)); // the same data directory again
  }
} finally {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
}

const row = (name: string, xs: Sample[]) => [
  name,
  median(xs.map((x) => x.readyMs)).toFixed(0),
  xs.map((x) => x.readyMs.toFixed(0)).join(' / '),
  median(xs.map((x) => x.rss)).toFixed(1),
  median(xs.map((x) => x.stopMs)).toFixed(0),
];
console.log(`\nserver start to /readyz 200 (embedded database), ${runs} runs each, RSS after ${idleMs} ms idle\n`);
console.log(
  table(
    ['database', 'ready ms (median)', 'ready ms (runs)', 'idle RSS MiB', 'SIGTERM to exit ms'],
    [row('new (empty DATA_DIR)', fresh), row('existing', existing)],
  ),
);
