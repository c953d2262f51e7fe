/**
 * Benchmark (issues 2 and 10): time from starting the server (`node server/start.js`, what `npm start`
 * runs) to `/readyz` answering 200, on a new and on an existing embedded database (DATA_DIR in a temp
 * dir); the server's CPU time when it first answered; resident memory at idle after start; time to exit after
 * SIGTERM. The server runs at LOG_LEVEL=info and its start line's `steps` (ms per start step: modules,
 * open_database, migrations, build_app, start_services) are printed as medians per case. No baseline process: the figures are absolute (compare runs of the same machine
 * state; the summary line carries them for bench/README.md). A new DATA_DIR is unpacked from the seed image
 * (server/src/db/pglite-seed.ts) when `npm install` made it.
 *
 *   npx tsx bench/startup.ts          (BENCH_RUNS starts per case, default 3; BENCH_IDLE_MS before reading RSS, default 3000)
 */
import fs from 'node:fs';
import { benchLine, median, rssMiB, startNode, stop, table, tempDir } from './lib/util.ts';

const runs = Number(process.env.BENCH_RUNS ?? 3);
const idleMs = Number(process.env.BENCH_IDLE_MS ?? 3000);
const env = (dataDir: string) => ({ DATA_DIR: dataDir, LOG_LEVEL: 'info', BREACH_CHECK_URL: 'off' });

interface Sample {
  readyMs: number;
  /** The server's CPU time (user + system, ms) when `/readyz` first answered 200: steadier on a loaded machine. */
  cpuMs: number;
  rss: number;
  stopMs: number;
  code: number | null;
  /** The start line's `steps` (ms). */
  steps: Record<string, number>;
}

async function once(dataDir: string): Promise<Sample> {
  const s = await startNode('server/start.js', env(dataDir), { stdout: true });
  const cpuMs = cpuTimeMs(s.proc.pid!);
  await new Promise((r) => setTimeout(r, idleMs));
  const rss = rssMiB(s.proc.pid!);
  const { code, ms } = await stop(s.proc);
  if (code !== 0) throw new Error(`exit code ${code}: ${s.output()}`);
  const steps = JSON.parse(/"steps":(\{[^}]*\})/.exec(s.output())?.[1] ?? '{}') as Record<string, number>;
  return { readyMs: s.readyMs, cpuMs, rss, stopMs: ms, code, steps };
}

/** CPU time (user + system, ms) of a process so far, from /proc/<pid>/stat (in clock ticks of 10 ms). */
function cpuTimeMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
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

const stepNames = ['modules', 'open_database', 'migrations', 'build_app', 'start_services'];
const stepsOf = (xs: Sample[]) => Object.fromEntries(stepNames.map((k) => [k, median(xs.map((x) => x.steps[k] ?? 0))]));
const row = (name: string, xs: Sample[]) => [
  name,
  median(xs.map((x) => x.readyMs)).toFixed(0),
  xs.map((x) => x.readyMs.toFixed(0)).join(' / '),
  median(xs.map((x) => x.cpuMs)).toFixed(0),
  median(xs.map((x) => x.rss)).toFixed(1),
  median(xs.map((x) => x.stopMs)).toFixed(0),
  stepNames.map((k) => stepsOf(xs)[k]).join(' / '),
];
console.log(`\nserver start to /readyz 200 (embedded database), ${runs} runs each, RSS after ${idleMs} ms idle\n`);
console.log(
  table(
    [
      'database',
      'ready ms (median)',
      'ready ms (runs)',
      'CPU ms at ready',
      'idle RSS MiB',
      'SIGTERM to exit ms',
      `steps ms (${stepNames.join(' / ')})`,
    ],
    [row('new (empty DATA_DIR)', fresh), row('existing', existing)],
  ),
);
const summary = (xs: Sample[]) => ({
  ready_ms: Math.round(median(xs.map((x) => x.readyMs))),
  cpu_ms_at_ready: Math.round(median(xs.map((x) => x.cpuMs))),
  idle_rss_mib: Math.round(median(xs.map((x) => x.rss))),
  steps: stepsOf(xs),
});
benchLine('startup', {
  new: summary(fresh),
  existing: summary(existing),
  aim: 'ready < 3000 ms new / < 1000 ms existing; idle RSS < 250 MiB',
});
