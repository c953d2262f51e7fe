/** Helpers shared by the benchmarks: start the server as `npm start` does, wait for /readyz, stop, read RSS. */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { freePort } from '../../server/test/net.ts';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');

export { freePort };

export const tempDir = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), `crm-bench-${prefix}-`));

export interface Started {
  proc: ChildProcess;
  port: number;
  url: string;
  /** Milliseconds from spawn to the first 200 of /readyz. */
  readyMs: number;
  output: () => string;
}

/**
 * Spawn a node process running `script` and wait until `GET {url}{readyPath}` answers 200: a `.ts` script
 * through tsx's loader, a `.js` one (`server/start.js`, what `npm start` runs) with plain Node. The pid is
 * the server itself (no wrapper process).
 */
export async function startNode(
  script: string,
  env: Record<string, string>,
  opts: {
    readyPath?: string;
    timeoutMs?: number;
    /** Keep stdout too in `output()` (the service's log). */ stdout?: boolean;
    /** After ready, wait for this in the output too (at most `timeoutMs`; given up silently past it). */
    settled?: RegExp;
  } = {},
): Promise<Started> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const t0 = performance.now();
  const proc = spawn(process.execPath, script.endsWith('.ts') ? ['--import', 'tsx', script] : [script], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      HOST: '127.0.0.1',
      // The service's V8 options (server/start.js), to compare sets of them: `NODE_V8_FLAGS=off npm run bench …`.
      ...(process.env.NODE_V8_FLAGS ? { NODE_V8_FLAGS: process.env.NODE_V8_FLAGS } : {}),
      ...env,
      PORT: String(port),
    },
    stdio: ['ignore', opts.stdout ? 'pipe' : 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d));
  proc.stdout?.on('data', (d) => (stderr += d));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${script} exited with ${proc.exitCode}: ${stderr}`);
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`${script} not ready in time: ${stderr}`);
    }
    try {
      const res = await fetch(`${url}${opts.readyPath ?? '/readyz'}`);
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  const readyMs = performance.now() - t0;
  while (opts.settled && !opts.settled.test(stderr) && Date.now() < deadline && proc.exitCode === null)
    await new Promise((r) => setTimeout(r, 50));
  return { proc, port, url, readyMs, output: () => stderr };
}

/** SIGTERM and wait for exit. @returns the exit code and milliseconds it took. */
export async function stop(proc: ChildProcess): Promise<{ code: number | null; ms: number }> {
  const t0 = performance.now();
  if (proc.exitCode !== null) return { code: proc.exitCode, ms: 0 };
  const exited = new Promise<number | null>((r) => proc.once('exit', (c) => r(c)));
  proc.kill('SIGTERM');
  const code = await Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), 15_000))]);
  if (proc.exitCode === null) proc.kill('SIGKILL');
  return { code, ms: performance.now() - t0 };
}

/** Resident set size of a process in MiB (VmRSS of /proc/<pid>/status). */
export function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+)\s+kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]) / 1024;
}

/** Print rows as a plain text table. */
export function table(header: string[], rows: Array<Array<string | number>>): string {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(cells[0]), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.slice(1).map(line)].join(
    '\n',
  );
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * Start the real service (`server/start.js`, embedded database in a fresh DATA_DIR, or DATABASE_URL when set)
 * with a bootstrap admin, and sign that admin in. `logLevel` defaults to info, as in production.
 * @returns the process (`real`), the admin's bearer `token`, and `close()` that stops it and removes DATA_DIR.
 */
export async function startServiceAsAdmin(
  prefix: string,
  logLevel = 'info',
): Promise<{ real: Started; token: string; close: () => Promise<void> }> {
  const dataDir = tempDir(prefix);
  const admin = { email: 'bench-admin@example.com', password: 'bench passphrase 123' };
  const real = await startNode(
    'server/start.js',
    {
      DATA_DIR: dataDir,
      LOG_LEVEL: logLevel,
      BREACH_CHECK_URL: 'off',
      ADMIN_EMAIL: admin.email,
      ADMIN_PASSWORD: admin.password,
      ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
      ...(process.env.LOG_FLUSH_MS ? { LOG_FLUSH_MS: process.env.LOG_FLUSH_MS } : {}),
    },
    // The global documents are indexed in the background after ready: measured after that, at a steady state (the
    // line is logged at info).
    { stdout: true, settled: ['info', 'debug', 'trace'].includes(logLevel) ? /global documents indexed/ : undefined },
  );
  const close = async () => {
    await stop(real.proc);
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  const login = await fetch(`${real.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(admin),
  });
  if (login.status !== 200) {
    const text = await login.text();
    await close();
    throw new Error(`login failed: ${login.status} ${text}`);
  }
  const { token } = (await login.json()) as { token: string };
  return { real, token, close };
}

/** What autocannon reports of one run that the comparison prints. */
export interface LoadResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
}

/** One side of a load comparison, as the summary line carries it. */
export interface LoadFigures {
  rps: number;
  p50: number;
  p99: number;
}

/** What `compareWithBare` measured: both sides and the ratios real/bare (throughput, p99 latency). */
export interface Comparison {
  real: LoadFigures;
  bare: LoadFigures;
  ratio: number;
  p99_ratio: number;
}

/**
 * The real server against its bare baseline in one run: each warmed up for 2 s (JIT, connection pools), then measured
 * in `rounds` alternating rounds (bare, real, bare, real, …) of `duration` seconds each with `run`, so a change of the
 * machine's speed during the run falls on both sides; prints `title`, each round and both ratios.
 * @param rounds default `BENCH_ROUNDS` or 3
 * @returns both sides' median figures over the rounds, the median of the rounds' throughput ratios (real/bare, each
 *   round's two runs back-to-back) and the p99 ratio of the medians.
 */
export async function compareWithBare(o: {
  title: string;
  realLabel: string;
  /** The baseline's row label (default "bare Fastify route"). */
  bareLabel?: string;
  realUrl: string;
  bareUrl: string;
  duration: number;
  rounds?: number;
  run: (url: string, seconds: number) => Promise<LoadResult>;
}): Promise<Comparison> {
  const rounds = Math.max(1, o.rounds ?? Number(process.env.BENCH_ROUNDS ?? 3));
  await o.run(o.bareUrl, 2);
  await o.run(o.realUrl, 2);
  const bs: LoadResult[] = [];
  const rs: LoadResult[] = [];
  for (let i = 0; i < rounds; i++) {
    bs.push(await o.run(o.bareUrl, o.duration));
    rs.push(await o.run(o.realUrl, o.duration));
  }
  const row = (label: string, x: LoadResult) => [
    label,
    x.requests.average.toFixed(0),
    x.latency.p50,
    x.latency.p99,
    x.requests.total,
  ];
  console.log(`\n${o.title}, ${rounds} alternating rounds\n`);
  console.log(
    table(
      ['round', 'server', 'req/s (avg)', 'p50 ms', 'p99 ms', 'requests'],
      bs.flatMap((b, i) => [
        [i + 1, ...row(o.bareLabel ?? 'bare Fastify route', b)],
        [i + 1, ...row(o.realLabel, rs[i])],
      ]),
    ),
  );
  const ratios = bs.map((b, i) => rs[i].requests.average / b.requests.average);
  const ratio = median(ratios);
  const figures = (xs: LoadResult[]) => ({
    rps: Math.round(median(xs.map((x) => x.requests.average))),
    p50: median(xs.map((x) => x.latency.p50)),
    p99: median(xs.map((x) => x.latency.p99)),
  });
  const real = figures(rs);
  const bare = figures(bs);
  const p99Ratio = real.p99 / Math.max(bare.p99, 1);
  console.log(
    `\nthroughput ratio real/bare: ${ratio.toFixed(2)} (median of the rounds: ${ratios.map((x) => x.toFixed(2)).join(', ')})`,
  );
  console.log(`p99 latency ratio real/bare: ${p99Ratio.toFixed(2)} (medians)`);
  return { real, bare, ratio: round2(ratio), p99_ratio: round2(p99Ratio) };
}

const round2 = (x: number) => Math.round(x * 100) / 100;

/**
 * Print the benchmark's machine-readable summary: one line `BENCH {"name": …, …}` that `npm run bench`
 * (bench/run.ts) collects into its closing table. Put the headline figures first; `ratio` is real/baseline (for
 * throughput: higher is better; for times: lower is better, say which in `baseline`).
 */
export function benchLine(name: string, figures: Record<string, unknown>): void {
  console.log(`BENCH ${JSON.stringify({ name, ...figures })}`);
}
