/**
 * Worker-runtime benchmark (`npx tsx bench/runtime.ts [messages]`): N (default 200) concurrent
 * messages through `POST /projects/:name/message` on the embedded database, against the local LLM
 * stand-in answering at once with one tool call (list_files) and then text (two model calls per run); the stand-in
 * runs in a child process (`lib/runtime-llm.ts`; `BENCH_LLM_IN_PROCESS=1` in this one).
 * Prints runs per second (first request → last run finished), the engine's own overhead per turn
 * (turn wall time minus the time inside the model call: tool execution, metering rows, heartbeat and
 * cancel checks; p50 and p99) and the peak resident memory while the runs execute (sampled every 20 ms from the
 * first request to the last run finished), beside the process's high-water mark before them (opening the in-memory
 * database runs PGlite's initdb, ~1.2 GiB for a moment, which a server never does: it starts from the seed image).
 * Also prints the CPU time per run and the heap used; opt-in evidence (bench/README.md, "Runtime, second round"):
 * BENCH_SQL_STATS, BENCH_SQL_STACK, BENCH_LOCK_STATS, BENCH_CPU_PROF, BENCH_ALLOC_PROF, BENCH_TURN_PARTS,
 * BENCH_HEAP_SNAPSHOT, BENCH_TURN_WAITS (each turn's overhead split into lock wait, own statements and the rest,
 * and whose statements it waited behind: lib/turn-waits.ts).
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
import { startRuntimeLlm } from './lib/runtime-llm.ts';
import { benchLine } from './lib/util.ts';
import { sqlStats, watchLockHolds } from './lib/pglite-stats.ts';
import {
  als,
  reportGapProfile,
  reportTurnWaits,
  stopTurnWaits,
  watchTurnWaits,
  type Ctx,
  type TurnRec,
} from './lib/turn-waits.ts';

const N = Number(process.argv[2] ?? 200);
const WORKERS = 20;
/** Resolved by the knowledge area's "global documents indexed" line (the indexing the service does after start). */
let globalDocsIndexed!: () => void;
const globalDocs = new Promise<void>((r) => (globalDocsIndexed = r));
const silent: any = {
  info(_o: unknown, m?: string) {
    if (m === 'global documents indexed') globalDocsIndexed();
  },
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
  // `memoryUsage.rss()`: the resident size alone (`memoryUsage()` also walks the heap's spaces: ~1 % of the runs' CPU
  // every 20 ms).
  if (sampling) peakRss = Math.max(peakRss, process.memoryUsage.rss());
}, 20);

// The LLM stand-in in a child process (a provider is another machine); BENCH_LLM_IN_PROCESS=1: in this process.
const LLM_IN_PROCESS = !!process.env.BENCH_LLM_IN_PROCESS;
const s = await startRuntimeLlm(LLM_IN_PROCESS);
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
const WAITS = !!process.env.BENCH_TURN_WAITS;
/** With BENCH_TURN_WAITS: each turn's lock waits and holds, with its overhead once known. */
const turnWaits: Array<{ rec: TurnRec; overhead: number }> = [];
/** Per run (its id): when its first model call started and when its engine returned (ms, performance.now()). */
const firstCallAt = new Map<number, number>();
const engineDoneAt = new Map<number, number>();
const engine: AgentEngine = {
  name: inner.name,
  async run(input, hooks) {
    const starts: number[] = [];
    const runId = input.toolContext.runId;
    const call0 = input.call;
    input = {
      ...input,
      call: (req, onText) => {
        if (!firstCallAt.has(runId)) firstCallAt.set(runId, performance.now());
        return call0(req, onText);
      },
    };
    try {
      return await runEngine(input, hooks, starts);
    } finally {
      engineDoneAt.set(runId, performance.now());
    }
  },
};
async function runEngine(
  input: Parameters<AgentEngine['run']>[0],
  hooks: Parameters<AgentEngine['run']>[1],
  starts: number[],
): ReturnType<AgentEngine['run']> {
  {
    if (WAITS) {
      // The run's turns under the tag `turn` (their own writes and tools), the model call under `metering`, the
      // finish after the engine under `run end` (the job handler's store, set below).
      const outer = als.getStore();
      const ctx: Ctx = { tag: 'turn' };
      const recs: TurnRec[] = [];
      const beforeTurn = hooks.beforeTurn.bind(hooks);
      hooks = {
        ...hooks,
        beforeTurn: (turn) => {
          ctx.turn = { start: performance.now(), wait: 0, hold: 0, waits: [], statements: 0 };
          recs.push(ctx.turn);
          return beforeTurn(turn);
        },
      };
      const call = input.call;
      input = { ...input, call: (req, onText) => als.run({ tag: 'metering' }, () => call(req, onText)) };
      const r = await als.run(ctx, () => inner.run(input, hooks));
      if (outer) outer.tag = 'run end';
      r.turnTimings.forEach((t, i) => recs[i] && turnWaits.push({ rec: recs[i], overhead: t.total_ms - t.llm_ms }));
      turns.push(...r.turnTimings.map((t, i) => ({ ...t, at_ms: recs[i] ? recs[i].start - tFirst : NaN })));
      return r;
    }
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
  }
}
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
if (WAITS) {
  // The run's job before its engine under `run start`; the job queue's own statements (fetch, complete) under `jobs`.
  const define = deps.jobs.define.bind(deps.jobs);
  deps.jobs.define = ((name: string, handler: (d: any, c: any) => Promise<void>, opts?: object) =>
    define(
      name as any,
      name === 'runtime.run' ? (d: any, c: any) => als.run({ tag: 'run start' }, () => handler(d, c)) : handler,
      opts,
    )) as typeof deps.jobs.define;
  const executeSql = database.executeSql.bind(database);
  database.executeSql = (text, values) => als.run({ tag: 'jobs' }, () => executeSql(text, values));
}
const app = await buildApp(deps);
// With BENCH_TURN_WAITS: the requests' statements under `route`.
if (WAITS) app.addHook('onRequest', async () => als.enterWith({ tag: 'route' }));
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

// Measured after the service settled, as the auth-me bench is: an in-memory database indexes the global documents
// after start (a server's seed image holds them), and that indexing (one transaction of a document's chunks
// holding the one connection up to ~40 ms) would fall among the first turns. At most 60 s.
const settleStart = performance.now();
await Promise.race([globalDocs, new Promise((r) => setTimeout(r, 60_000))]);
console.log(
  `settled:            ${(performance.now() - settleStart).toFixed(0)} ms after app ready (global documents indexed)`,
);
const maxRssBefore = process.resourceUsage().maxRSS * 1024;
const heapBefore = process.memoryUsage().heapUsed;
peakRss = process.memoryUsage().rss;
sampling = true;
if (process.env.BENCH_SQL_STATS) sqlStats.start();
if (WAITS) watchTurnWaits();
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
/** With BENCH_CPU_PROF: the profile, for BENCH_TURN_WAITS's gaps. */
let cpuProfile: any;
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
/** Per run (its id): when its message was answered 202 (ms, performance.now()). */
const acceptedAt = new Map<number, number>();
const answers = await Promise.all(
  Array.from({ length: N }, (_, i) =>
    app
      .inject({
        method: 'POST',
        url: '/api/crm/projects/bench/message',
        headers: { authorization: `Bearer ${token}` },
        payload: { worker_id: workerIds[i % WORKERS], text: `message ${i}` },
      })
      .then((a) => {
        const t = performance.now();
        if (a.statusCode === 202) for (const id of (a.json() as { run_ids: number[] }).run_ids) acceptedAt.set(id, t);
        return a;
      }),
  ),
);
const accepted = performance.now();
let lastDbPoll = accepted;
const bad = answers.filter((a) => a.statusCode !== 202);
if (bad.length) throw new Error(`${bad.length} messages refused: ${bad[0].body}`);
for (;;) {
  // The runs' state is read from the database once every run's engine returned (before, every 1 s): the bench's own
  // statements stay out of the runs' way.
  if (engineDoneAt.size < N && performance.now() - lastDbPoll < 1000) {
    await new Promise((r) => setTimeout(r, 20));
    continue;
  }
  lastDbPoll = performance.now();
  const row = await als.run({ tag: 'bench' }, () =>
    database.db
      .selectFrom('agent_runs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', 'in', ['queued', 'running'])
      .executeTakeFirstOrThrow(),
  );
  if (Number(row.n) === 0) break;
  await new Promise((r) => setTimeout(r, 20));
}
const finished = performance.now();
// CPU time of the process over the runs (user + system): the work done, much less sensitive than wall time to
// other processes on the machine.
const cpuRuns = process.cpuUsage(cpu0);
const cpuMsPerRun = (cpuRuns.user + cpuRuns.system) / 1000 / N;
sqlStats.stop();
stopTurnWaits();
if (profiler && process.env.BENCH_ALLOC_PROF) {
  const { profile } = await profiler.post('HeapProfiler.stopSampling');
  fs.writeFileSync(process.env.BENCH_ALLOC_PROF, JSON.stringify(profile));
  profiler.disconnect();
} else if (profiler) {
  const { profile } = await profiler.post('Profiler.stop');
  cpuProfile = profile;
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
  `worker runtime benchmark — ${N} concurrent messages, ${WORKERS} workers, embedded database (PGlite), stand-in LLM (tool call, then text) ${LLM_IN_PROCESS ? 'in this process' : 'in a child process'}`,
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
const sinceAccepted = (at: Map<number, number>) =>
  [...acceptedAt].filter(([id]) => at.has(id)).map(([id, t]) => at.get(id)! - t);
const toFirstCall = sinceAccepted(firstCallAt);
const toDone = sinceAccepted(engineDoneAt);
console.log(
  `accepted → first model call: p50 ${q(toFirstCall, 50).toFixed(0)} ms, p99 ${q(toFirstCall, 99).toFixed(0)} ms; ` +
    `accepted → engine done: p50 ${q(toDone, 50).toFixed(0)} ms, p99 ${q(toDone, 99).toFixed(0)} ms (n ${toDone.length})`,
);
console.log(`CPU per run:        ${cpuMsPerRun.toFixed(1)} ms (user + system over the runs, divided by ${N})`);
console.log(`peak RSS (runs):    ${(peakRss / 1024 / 1024).toFixed(0)} MiB`);
console.log(
  `max RSS before:     ${(maxRssBefore / 1024 / 1024).toFixed(0)} MiB (process high-water mark at the first request: database open, app start)`,
);

if (process.env.BENCH_SQL_STATS) sqlStats.report(N);
lockReport?.();
if (WAITS) reportTurnWaits(turnWaits, tFirst);
if (WAITS && cpuProfile) reportGapProfile(turnWaits, cpuProfile);
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
  first_call_p50_ms: Math.round(q(toFirstCall, 50)),
  first_call_p99_ms: Math.round(q(toFirstCall, 99)),
  done_p50_ms: Math.round(q(toDone, 50)),
  done_p99_ms: Math.round(q(toDone, 99)),
  max_rss_before_runs_mib: Math.round(maxRssBefore / 1024 / 1024),
  baseline: 'model call time subtracted per turn (stand-in LLM)',
  llm_stand_in: LLM_IN_PROCESS ? 'in process' : 'child process',
  aim: 'overhead p99 < 15 ms, peak RSS < 450 MiB',
});
await app.close();
await database.close();
await s.close();
fs.rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
