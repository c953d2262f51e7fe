/**
 * Worker-runtime benchmark (`npx tsx bench/runtime.ts [messages]`): N (default 200) concurrent
 * messages through `POST /projects/:name/message` on the embedded database, against the local LLM
 * stand-in answering at once with one tool call (list_files) and then text (two model calls per run).
 * Prints runs per second (first request → last run finished), the engine's own overhead per turn
 * (turn wall time minus the time inside the model call: tool execution, metering rows, heartbeat and
 * cancel checks; p50 and p99) and the peak resident memory while the runs execute (sampled every 20 ms from the
 * first request to the last run finished), beside the process's high-water mark before them (opening the in-memory
 * database runs PGlite's initdb, ~1.2 GiB for a moment, which a server never does: it starts from the seed image).
 * The stand-in's log of requests is emptied as they come (it would hold every request body of the 400 calls).
 * Also prints the CPU time per run and the heap used; opt-in evidence (bench/README.md, "Runtime, second round"):
 * BENCH_SQL_STATS, BENCH_SQL_STACK, BENCH_LOCK_STATS, BENCH_CPU_PROF, BENCH_ALLOC_PROF, BENCH_TURN_PARTS,
 * BENCH_HEAP_SNAPSHOT.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { Session } from 'node:inspector/promises';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { loadConfig } from '../server/src/config.ts';
import { openDatabase } from '../server/src/db/database.ts';
import { migrateToLatest } from '../server/src/db/migrate.ts';
import { buildApp } from '../server/src/app.ts';
import { createDeps } from '../server/src/deps.ts';
import { createBuiltinEngine, type AgentEngine } from '../server/src/modules/runtime/engine.ts';
import { startLlmStandIn } from '../server/test/standins/llm.ts';
import { benchLine } from './lib/util.ts';
import { sqlStats, watchLockHolds } from './lib/pglite-stats.ts';

const N = Number(process.argv[2] ?? 200);
const WORKERS = 20;
const silent: any = {
  info() {},
  warn() {},
  error() {},
  debug() {},
  trace() {},
  fatal() {},
  child: () => silent,
  level: 'silent',
};

let peakRss = 0;
let sampling = false;
const sampler = setInterval(() => {
  if (sampling) peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 20);

const s = await startLlmStandIn({
  responder: (req) => {
    s.requests.length = 0;
    const last = req.body.messages?.at(-1);
    const afterTool = Array.isArray(last?.content) && last.content.some((b: any) => b.type === 'tool_result');
    return afterTool
      ? { content: [{ type: 'text', text: 'Here is what I found.' }] }
      : { content: [{ type: 'tool_use', name: 'list_files', input: {} }] };
  },
});
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-runtime-'));
const config = loadConfig({
  DATA_DIR: dataDir,
  DATABASE_URL: 'memory://',
  BREACH_CHECK_URL: 'off',
  LLM_BASE_URL: s.anthropicUrl,
  // N messages of one user at once: the per-user message limit (60/1m by default) is not what is measured here.
  RATE_LIMIT_MESSAGES: `${N * 10}/1m`,
});
const database = await openDatabase({ url: config.databaseUrl, dataDir });
await migrateToLatest(database.db);

const turns: Array<{ total_ms: number; llm_ms: number; at_ms?: number }> = [];
/** With BENCH_TURN_PARTS: when each turn started (ms since the first request), by run, to place the slowest turns. */
let tFirst = 0;
/** `BENCH_TURN_PARTS=1`: the times of each part of the turns (ms). */
const parts: Record<string, number[]> = {};
const inner = createBuiltinEngine();
const engine: AgentEngine = {
  name: inner.name,
  async run(input, hooks) {
    const starts: number[] = [];
    if (process.env.BENCH_TURN_PARTS) {
      // Each part of a turn's overhead timed apart: the hooks that write the run row, and the tools.
      const timed =
        <A extends unknown[], R>(part: string, fn: (...a: A) => Promise<R>) =>
        async (...a: A): Promise<R> => {
          const t = performance.now();
          try {
            return await fn(...a);
          } finally {
            (parts[part] ??= []).push(performance.now() - t);
          }
        };
      const beforeTurn = timed('beforeTurn', hooks.beforeTurn.bind(hooks));
      hooks = {
        ...hooks,
        beforeTurn: (turn) => {
          starts.push(performance.now() - tFirst);
          return beforeTurn(turn);
        },
        ...(hooks.checkpoint ? { checkpoint: timed('checkpoint', hooks.checkpoint.bind(hooks)) } : {}),
      };
      input = {
        ...input,
        call: timed('model call (metered)', input.call),
        tools: input.tools.map((t) => ({ ...t, run: timed(`tool ${t.name}`, t.run.bind(t)) })),
      };
    }
    const r = await inner.run(input, hooks);
    turns.push(...r.turnTimings.map((t, i) => (starts.length ? { ...t, at_ms: starts[i] } : t)));
    return r;
  },
};
const deps = createDeps(
  config,
  database,
  { crmSecret: 'bench-signing-secret-0123456789abcdef', secretEncryptionKey: 'bench-encryption-key-0123456789abcdef' },
  silent,
  { agentEngine: engine },
);
// With BENCH_TURN_PARTS: when the provider's SDK was first asked for (a warm-up or the first call) and when it was loaded.
const sdkLoad: { asked?: number; loaded?: number } = {};
if (process.env.BENCH_TURN_PARTS) {
  const llm = deps.llm as { warm?: () => void; complete: (...a: any[]) => Promise<any> };
  const asked = () => {
    if (sdkLoad.asked !== undefined) return;
    sdkLoad.asked = performance.now() - tFirst;
    void import('@anthropic-ai/sdk').then(() => (sdkLoad.loaded = performance.now() - tFirst));
  };
  const { warm, complete } = llm;
  if (warm)
    llm.warm = () => {
      asked();
      warm();
    };
  llm.complete = (...a) => {
    asked();
    return complete(...a);
  };
}
const app = await buildApp(deps);
await app.ready();

const user = await database.db
  .insertInto('users')
  .values({
    email: 'bench@example.com',
    password_hash: 'x',
    plan: 'beta',
    email_verified: true,
    chat_id: '1',
    name: null,
  })
  .returning('id')
  .executeTakeFirstOrThrow();
await database.db
  .insertInto('account_settings')
  .values({ user_id: user.id, llm_key_enc: deps.sealer.seal('sk-bench-key') })
  .execute();
const project = await database.db
  .insertInto('projects')
  .values({ owner_id: user.id, name: 'bench', display_name: 'Bench' })
  .returning('id')
  .executeTakeFirstOrThrow();
fs.mkdirSync(path.join(deps.access.projectDir(project.id), 'src'), { recursive: true });
fs.writeFileSync(path.join(deps.access.projectDir(project.id), 'src', 'index.ts'), 'export {};\n');
const workerIds: number[] = [];
for (let i = 0; i < WORKERS; i++) {
  const w = await database.db
    .insertInto('workers')
    .values({
      project_id: project.id,
      label: `w${i}`,
      model: 'claude-haiku-4-5',
      tools: JSON.stringify(['files']),
      icon: null,
      prompt_style: null,
      role: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  workerIds.push(w.id);
}
const token = await deps.tokens.sign({ sub: user.id, role: 'user', pv: 0, chat_id: String(user.id) });

const maxRssBefore = process.resourceUsage().maxRSS * 1024;
const heapBefore = process.memoryUsage().heapUsed;
peakRss = process.memoryUsage().rss;
sampling = true;
if (process.env.BENCH_SQL_STATS) sqlStats.start();
const lockReport = process.env.BENCH_LOCK_STATS ? await watchLockHolds(Number(process.env.BENCH_LOCK_STATS)) : null;
// `BENCH_CPU_PROF=file.cpuprofile`: a CPU profile (500 µs sampling) of the runs only, from the first request to the last
// run finished (not the database's initdb nor the app's start).
// With BENCH_TURN_PARTS: the event loop's delay and V8's GC pauses over the runs (what stalls every run at once).
const loopDelay = process.env.BENCH_TURN_PARTS ? monitorEventLoopDelay({ resolution: 5 }) : null;
const gcPauses: number[] = [];
const gcObserver = process.env.BENCH_TURN_PARTS
  ? new PerformanceObserver((list) => gcPauses.push(...list.getEntries().map((e) => e.duration)))
  : null;
loopDelay?.enable();
/** With BENCH_TURN_PARTS: the event loop's stalls over 100 ms (a 10 ms timer's lateness) and when they ended. */
const stalls: Array<{ ms: number; at: number }> = [];
let lastTick = performance.now();
const stallTimer = process.env.BENCH_TURN_PARTS
  ? setInterval(() => {
      const now = performance.now();
      if (now - lastTick - 10 > 100) stalls.push({ ms: now - lastTick - 10, at: now - tFirst });
      lastTick = now;
    }, 10)
  : null;
gcObserver?.observe({ entryTypes: ['gc'] });
const profiler = process.env.BENCH_CPU_PROF || process.env.BENCH_ALLOC_PROF ? new Session() : null;
if (profiler && process.env.BENCH_ALLOC_PROF) {
  // `BENCH_ALLOC_PROF=file.heapprofile`: V8's sampling heap profiler over the runs (what allocates the garbage).
  profiler.connect();
  await profiler.post('HeapProfiler.startSampling', {
    samplingInterval: 32768,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
} else if (profiler) {
  profiler.connect();
  await profiler.post('Profiler.enable');
  await profiler.post('Profiler.setSamplingInterval', { interval: 500 });
  await profiler.post('Profiler.start');
}
const cpu0 = process.cpuUsage();
const t0 = performance.now();
tFirst = t0;
const answers = await Promise.all(
  Array.from({ length: N }, (_, i) =>
    app.inject({
      method: 'POST',
      url: '/api/crm/projects/bench/message',
      headers: { authorization: `Bearer ${token}` },
      payload: { worker_id: workerIds[i % WORKERS], text: `message ${i}` },
    }),
  ),
);
const accepted = performance.now();
const bad = answers.filter((a) => a.statusCode !== 202);
if (bad.length) throw new Error(`${bad.length} messages refused: ${bad[0].body}`);
for (;;) {
  const row = await database.db
    .selectFrom('agent_runs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', 'in', ['queued', 'running'])
    .executeTakeFirstOrThrow();
  if (Number(row.n) === 0) break;
  await new Promise((r) => setTimeout(r, 20));
}
const finished = performance.now();
// CPU time of the process over the runs (user + system): the work done, much less sensitive than wall time to
// other processes on the machine.
const cpuRuns = process.cpuUsage(cpu0);
const cpuMsPerRun = (cpuRuns.user + cpuRuns.system) / 1000 / N;
sqlStats.stop();
if (profiler && process.env.BENCH_ALLOC_PROF) {
  const { profile } = await profiler.post('HeapProfiler.stopSampling');
  fs.writeFileSync(process.env.BENCH_ALLOC_PROF, JSON.stringify(profile));
  profiler.disconnect();
} else if (profiler) {
  const { profile } = await profiler.post('Profiler.stop');
  fs.writeFileSync(process.env.BENCH_CPU_PROF!, JSON.stringify(profile));
  profiler.disconnect();
}
const heapAfter = process.memoryUsage().heapUsed;
// With `node --expose-gc`: what of the heap's growth over the runs a full collection gives back (garbage, not held).
const gc = (globalThis as { gc?: () => void }).gc;
gc?.();
const heapAfterGc = gc ? process.memoryUsage().heapUsed : null;
peakRss = Math.max(peakRss, process.memoryUsage().rss);
sampling = false;
const statuses = await database.db
  .selectFrom('agent_runs')
  .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
  .groupBy('status')
  .execute();
const usageRows = await database.db
  .selectFrom('token_usage')
  .select((eb) => eb.fn.countAll<number>().as('n'))
  .executeTakeFirstOrThrow();

const q = (xs: number[], p: number) => {
  const a = [...xs].sort((x, y) => x - y);
  return a[Math.max(0, Math.ceil((p / 100) * a.length) - 1)];
};
const overhead = turns.map((t) => t.total_ms - t.llm_ms);
const llm = turns.map((t) => t.llm_ms);
clearInterval(sampler);

console.log(
  `worker runtime benchmark — ${N} concurrent messages, ${WORKERS} workers, embedded database (PGlite), stand-in LLM (tool call, then text)`,
);
console.log(
  `runs:               ${statuses.map((x) => `${x.status} ${x.n}`).join(', ')}; token_usage rows ${usageRows.n}`,
);
console.log(`accept all:         ${(accepted - t0).toFixed(0)} ms (202 for every message)`);
console.log(
  `all runs finished:  ${(finished - t0).toFixed(0)} ms → ${((N / (finished - t0)) * 1000).toFixed(1)} runs/s`,
);
console.log(`turns measured:     ${turns.length}`);
console.log(
  `engine overhead/turn (turn time − model call): p50 ${q(overhead, 50).toFixed(2)} ms, p99 ${q(overhead, 99).toFixed(2)} ms`,
);
console.log(`model call (stand-in, incl. SDK): p50 ${q(llm, 50).toFixed(2)} ms, p99 ${q(llm, 99).toFixed(2)} ms`);
console.log(`CPU per run:        ${cpuMsPerRun.toFixed(1)} ms (user + system over the runs, divided by ${N})`);
console.log(`peak RSS (runs):    ${(peakRss / 1024 / 1024).toFixed(0)} MiB`);
console.log(
  `max RSS before:     ${(maxRssBefore / 1024 / 1024).toFixed(0)} MiB (process high-water mark at the first request: database open, app start)`,
);

if (process.env.BENCH_SQL_STATS) sqlStats.report(N);
lockReport?.();
if (process.env.BENCH_HEAP_SNAPSHOT) {
  // After the runs (and the full GC above with `node --expose-gc`), before anything is closed: what the heap holds.
  console.log(`heap snapshot: ${v8.writeHeapSnapshot(process.env.BENCH_HEAP_SNAPSHOT)}`);
}

for (const [part, xs] of Object.entries(parts))
  console.log(`  ${part.padEnd(22)} n ${xs.length}, p50 ${q(xs, 50).toFixed(2)} ms, p99 ${q(xs, 99).toFixed(2)} ms`);
if (process.env.BENCH_TURN_PARTS) {
  const worst = turns
    .map((t) => ({ o: t.total_ms - t.llm_ms, at: t.at_ms ?? NaN }))
    .sort((a, b) => b.o - a.o)
    .slice(0, 8);
  clearInterval(stallTimer!);
  console.log(
    `  LLM SDK: asked for at ${sdkLoad.asked?.toFixed(0)} ms after the first request, loaded at ${sdkLoad.loaded?.toFixed(0)} ms; ` +
      `first turn started at ${Math.min(...turns.map((t) => t.at_ms ?? Infinity)).toFixed(0)} ms`,
  );
  console.log(
    `  event loop stalls over 100 ms (ms @ ms after the first request): ${stalls.map((x) => `${x.ms.toFixed(0)} @ ${x.at.toFixed(0)}`).join(', ') || 'none'}`,
  );
  console.log(
    `  slowest turns (overhead ms @ start ms after the first request): ${worst.map((w) => `${w.o.toFixed(0)} @ ${w.at.toFixed(0)}`).join(', ')}`,
  );
}
if (loopDelay) {
  loopDelay.disable();
  gcObserver!.disconnect();
  const ns = (v: number) => (v / 1e6).toFixed(1);
  console.log(
    `  event loop delay: p50 ${ns(loopDelay.percentile(50))} ms, p99 ${ns(loopDelay.percentile(99))} ms, max ${ns(loopDelay.max)} ms; ` +
      `GC pauses ${gcPauses.length}, ${gcPauses.reduce((a, b) => a + b, 0).toFixed(0)} ms in all, ` +
      `${gcPauses.filter((d) => d > 20).length} over 20 ms, max ${Math.max(0, ...gcPauses).toFixed(0)} ms`,
  );
}
const mib = (b: number) => Math.round(b / 1024 / 1024);
console.log(
  `heap used:          ${mib(heapBefore)} MiB at the first request → ${mib(heapAfter)} MiB after the runs` +
    (heapAfterGc !== null ? ` → ${mib(heapAfterGc)} MiB after a full GC` : ' (node --expose-gc: also after a full GC)'),
);

benchLine('runtime', {
  overhead_p50_ms: +q(overhead, 50).toFixed(2),
  overhead_p99_ms: +q(overhead, 99).toFixed(2),
  runs_per_s: +((N / (finished - t0)) * 1000).toFixed(1),
  cpu_ms_per_run: +cpuMsPerRun.toFixed(1),
  peak_rss_mib: Math.round(peakRss / 1024 / 1024),
  max_rss_before_runs_mib: Math.round(maxRssBefore / 1024 / 1024),
  baseline: 'model call time subtracted per turn (stand-in LLM)',
  aim: 'overhead p99 < 15 ms, peak RSS < 450 MiB',
});
await app.close();
await database.close();
await s.close();
fs.rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
