/**
 * `BENCH_TURN_WAITS=1` (bench/runtime.ts): what each turn's overhead (turn time minus the model call) consists of, on
 * the embedded database's one connection. Every acquisition of the connection's lock (`Lock`, db/pglite-dialect.ts;
 * this process only, nothing in server/src) is timed: the wait for it and the hold (the statement's execution, or a
 * transaction's statements and the work between them), under the tag of who asked (an AsyncLocalStorage store set by
 * the bench: `route` the message route, `run start` a run's job before its engine (claim, prepare, gate), `turn` a
 * turn's own writes and tools, `metering` the model call's reservation and settlement, `run end` the finish,
 * `jobs` the job queue's own statements (fetch, complete), `bench` the bench's poll, `other` the rest).
 *
 * `report()` prints, for all turns and for the slowest 1 % / 5 %: the overhead split into waiting for the lock,
 * holding it (the turn's own statements), and the rest (tools, JavaScript, the event loop's lateness); and while
 * those turns waited, whose holds they waited behind (by tag, ms per turn).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { PerformanceObserver } from 'node:perf_hooks';
import { Lock } from '../../server/src/db/pglite-dialect.ts';

export interface Ctx {
  tag: string;
  /** A turn under way (tag `turn`): what its lock waits and holds add up to. */
  turn?: TurnRec;
}
export interface TurnRec {
  start: number;
  wait: number;
  hold: number;
  /** Lock waits of this turn: [from, to] (ms, performance.now()). */
  waits: Array<[number, number]>;
  statements: number;
}

export const als = new AsyncLocalStorage<Ctx>();
const holds: Array<{ from: number; to: number; tag: string }> = [];
/** V8's GC pauses over the runs: [start, end] (ms, performance.now()). */
const gcs: Array<[number, number]> = [];
let on = false;
const gcObserver = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcs.push([e.startTime, e.startTime + e.duration]);
});

/** Start timing every lock acquisition (call before the runs). */
export function watchTurnWaits(): void {
  const orig = Lock.prototype.acquire;
  Lock.prototype.acquire = function (this: InstanceType<typeof Lock>) {
    const ctx = als.getStore();
    const asked = performance.now();
    return orig.call(this).then((release) => {
      const got = performance.now();
      const turn = ctx?.tag === 'turn' ? ctx.turn : undefined;
      if (turn) {
        turn.wait += got - asked;
        turn.waits.push([asked, got]);
        turn.statements++;
      }
      return () => {
        const to = performance.now();
        if (on) holds.push({ from: got, to, tag: ctx?.tag ?? 'other' });
        if (turn) turn.hold += to - got;
        release();
      };
    });
  };
  on = true;
  gcObserver.observe({ entryTypes: ['gc'] });
}

/** Stop recording holds. */
export function stopTurnWaits(): void {
  on = false;
  gcObserver.disconnect();
}

/** What a CPU profile's frame is, by its script (the categories of bench/README.md's profiles). */
function category(url: string, fn: string): string {
  if (fn === '(garbage collector)') return 'GC';
  if (fn === '(idle)') return 'idle';
  if (fn === '(program)') return 'V8 (program)';
  if (/standins/.test(url)) return 'LLM stand-in';
  if (/pglite/.test(url) || url.startsWith('wasm')) return 'PGlite';
  if (/anthropic|undici/.test(url)) return 'SDK + undici';
  if (/kysely/.test(url)) return 'Kysely';
  if (/pg-boss/.test(url)) return 'pg-boss';
  if (/fastify|light-my-request|avvio|find-my-way/.test(url)) return 'Fastify';
  if (/server\/src/.test(url)) return 'server/src';
  if (/bench\//.test(url)) return 'bench';
  if (url.startsWith('node:') || url === '') return 'Node internals';
  return 'other';
}

/**
 * With a CPU profile of the same runs (`BENCH_CPU_PROF`): what the process ran while the slowest 5 % of the turns
 * waited for a lock no one held (the gaps), by category. The profile's times are the monotonic clock's (µs), as
 * `process.hrtime`'s: mapped onto performance.now() through one reading of both.
 */
export function reportGapProfile(
  turns: Array<{ rec: TurnRec; overhead: number }>,
  profile: { nodes: any[]; samples: number[]; timeDeltas: number[]; startTime: number },
): void {
  const windows: Array<[number, number]> = [];
  for (const t of [...turns].sort((x, y) => y.overhead - x.overhead).slice(0, Math.ceil(turns.length * 0.05)))
    for (const [a, b] of t.rec.waits) {
      // The parts of [a, b] no hold covers.
      let at = a;
      for (const h of holds) {
        if (h.from >= b) break;
        if (h.to <= at) continue;
        if (h.from > at) windows.push([at, Math.min(h.from, b)]);
        at = Math.max(at, h.to);
      }
      if (at < b) windows.push([at, b]);
    }
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const by: Record<string, number> = {};
  const fns: Record<string, number> = {};
  let n = 0;
  const nowMs = performance.now();
  const hrUs = Number(process.hrtime.bigint() / 1000n);
  let us = profile.startTime;
  profile.samples.forEach((id, i) => {
    us += profile.timeDeltas[i];
    const ts = nowMs + (us - hrUs) / 1000;
    if (!windows.some(([a, b]) => ts >= a && ts < b)) return;
    const f = byId.get(id).callFrame;
    const k = category(f.url, f.functionName);
    by[k] = (by[k] ?? 0) + 1;
    const fk = `${f.functionName || '(anonymous)'} ${String(f.url).replace(/.*node_modules\//, '')}`;
    fns[fk] = (fns[fk] ?? 0) + 1;
    n++;
  });
  console.log(
    `  the slowest 5 % of turns' gaps (${windows.reduce((s, [a, b]) => s + b - a, 0).toFixed(0)} ms, ${n} samples): ${Object.entries(
      by,
    )
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${((100 * v) / Math.max(1, n)).toFixed(0)} %`)
      .join(', ')}`,
  );
  console.log(
    `    functions: ${Object.entries(fns)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 12)
      .map(([k, v]) => `${k} ${((100 * v) / Math.max(1, n)).toFixed(0)} %`)
      .join('; ')}`,
  );
}

/** Print the split of the turns' overhead (see the module comment). `turns`: each turn's record and overhead (ms). */
export function reportTurnWaits(turns: Array<{ rec: TurnRec; overhead: number }>, t0: number): void {
  holds.sort((a, b) => a.from - b.from);
  const overlap = (a: number, b: number, from: number, to: number) => Math.max(0, Math.min(b, to) - Math.max(a, from));
  /** Per tag, the holds' time inside the waits; `gap` the waits' time no one held the lock, `gc` the GC pauses then. */
  const behind = (waits: Array<[number, number]>) => {
    const by: Record<string, number> = {};
    for (const [a, b] of waits) {
      let held = 0;
      for (const h of holds) {
        if (h.from >= b) break;
        const o = overlap(a, b, h.from, h.to);
        if (o > 0) {
          by[h.tag] = (by[h.tag] ?? 0) + o;
          held += o;
        }
      }
      by['(free: gap)'] = (by['(free: gap)'] ?? 0) + (b - a - held);
      for (const [g0, g1] of gcs) by['(of which GC)'] = (by['(of which GC)'] ?? 0) + overlap(a, b, g0, g1);
    }
    return by;
  };
  const sorted = [...turns].sort((x, y) => y.overhead - x.overhead);
  const line = (label: string, set: typeof turns) => {
    if (!set.length) return;
    const n = set.length;
    const sum = (f: (t: (typeof turns)[number]) => number) => set.reduce((s, t) => s + f(t), 0) / n;
    const ov = sum((t) => t.overhead);
    const wait = sum((t) => t.rec.wait);
    const hold = sum((t) => t.rec.hold);
    const st = sum((t) => t.rec.statements);
    const by: Record<string, number> = {};
    for (const t of set) for (const [k, v] of Object.entries(behind(t.rec.waits))) by[k] = (by[k] ?? 0) + v / n;
    console.log(
      `  ${label.padEnd(18)} n ${String(n).padStart(3)}: overhead ${ov.toFixed(1)} ms = lock wait ${wait.toFixed(1)} + own holds ${hold.toFixed(1)} (${st.toFixed(1)} statements) + rest ${(ov - wait - hold).toFixed(1)}; ` +
        `started ${(sum((t) => t.rec.start) - t0).toFixed(0)} ms after the first request on average; waited behind: ${Object.entries(
          by,
        )
          .sort((a, b) => b[1] - a[1])
          .map(([k, v]) => `${k} ${v.toFixed(1)}`)
          .join(', ')}`,
    );
  };
  console.log('turn overhead split (mean per turn, ms):');
  line('all turns', turns);
  line('slowest 5 %', sorted.slice(0, Math.ceil(turns.length * 0.05)));
  line('slowest 1 %', sorted.slice(0, Math.ceil(turns.length * 0.01)));
  for (const t of sorted.slice(0, 8))
    console.log(
      `    ${t.overhead.toFixed(0)} ms @ ${(t.rec.start - t0).toFixed(0)}: wait ${t.rec.wait.toFixed(0)}, hold ${t.rec.hold.toFixed(1)}; behind ${Object.entries(
        behind(t.rec.waits),
      )
        .map(([k, v]) => `${k} ${v.toFixed(0)}`)
        .join(', ')}`,
    );
  if (process.env.BENCH_TURN_WAITS === 'timeline') {
    const allWaits = turns.flatMap((t) => t.rec.waits);
    const cnt: Record<string, number> = {};
    for (const h of holds)
      if (allWaits.some(([a, b]) => overlap(a, b, h.from, h.to) > 0)) cnt[h.tag] = (cnt[h.tag] ?? 0) + 1;
    console.log(`    holds overlapping some turn's wait, by tag: ${JSON.stringify(cnt)}`);
    // Lock time by tag per second, and the turns' mean overhead per second of their start.
    const secs = new Map<number, Record<string, number>>();
    for (const h of holds) {
      const k = Math.floor((h.from - t0) / 1000);
      const r = secs.get(k) ?? {};
      r[h.tag] = (r[h.tag] ?? 0) + h.to - h.from;
      secs.set(k, r);
    }
    for (const [k, r] of [...secs].sort((a, b) => a[0] - b[0])) {
      const ts = turns.filter((t) => Math.floor((t.rec.start - t0) / 1000) === k);
      const ov = ts.length ? ts.reduce((s, t) => s + t.overhead, 0) / ts.length : NaN;
      console.log(
        `    s ${k}: turns ${ts.length}, mean overhead ${ov.toFixed(1)}; held ${Object.entries(r)
          .map(([t, v]) => `${t} ${v.toFixed(0)}`)
          .join(', ')}`,
      );
    }
  }
  const tags: Record<string, { n: number; ms: number }> = {};
  for (const h of holds) {
    const t = (tags[h.tag] ??= { n: 0, ms: 0 });
    t.n++;
    t.ms += h.to - h.from;
  }
  console.log(
    `  lock holds over the runs by tag (count, ms): ${Object.entries(tags)
      .sort((a, b) => b[1].ms - a[1].ms)
      .map(([k, v]) => `${k} ${v.n} / ${v.ms.toFixed(0)}`)
      .join(', ')}`,
  );
}
