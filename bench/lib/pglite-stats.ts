/**
 * Statement statistics for a bench process on the embedded database (`BENCH_SQL_STATS=1`): wraps PGlite's
 * `query` and `exec` on its prototype and the dialect's prepared statements (this process only, nothing in server/src), counting and timing every
 * statement by its text (whitespace collapsed, parameters apart). `sqlStats.report(runs)` prints the kinds by count
 * with the count per run and the total time.
 */
import { PGlite } from '@electric-sql/pglite';
import { Statements } from '../../server/src/db/pglite-dialect.ts';

interface Kind {
  n: number;
  ms: number;
  live: number;
}
const kinds = new Map<string, Kind>();
let on = false;
/** `BENCH_SQL_STACK=regex`: the distinct call stacks of the statements matching it are printed with the report. */
const stackOf = process.env.BENCH_SQL_STACK ? new RegExp(process.env.BENCH_SQL_STACK) : null;
const stacks = new Map<string, number>();

function record(sql: string, ms: number, live: boolean) {
  const key = sql.replace(/\s+/g, ' ').trim().slice(0, 220);
  const k = kinds.get(key) ?? { n: 0, ms: 0, live: 0 };
  k.n++;
  k.ms += ms;
  if (live) k.live++;
  kinds.set(key, k);
}

/** Times one statement (`fn`) under its text when counting. */
async function timed<T>(sql: string, fn: () => Promise<T>): Promise<T> {
  if (!on) return fn();
  if (stackOf && stackOf.test(sql) && stacks.size < 20) {
    const st = (new Error().stack ?? '').split('\n').slice(3, 15).join('\n');
    stacks.set(st, (stacks.get(st) ?? 0) + 1);
  }
  const t = performance.now();
  try {
    return await fn();
  } finally {
    record(sql, performance.now() - t, true);
  }
}

// The dialect's statements and the job queue's run as prepared statements or simple queries (`Statements`), not
// through `query` (which `Statements.run` still calls for the rest: counted below).
for (const name of ['prepared', 'simple']) {
  const proto = Statements.prototype as any;
  const orig = proto[name];
  proto[name] = function (this: unknown, sql: string, ...rest: unknown[]) {
    return timed(sql, () => orig.call(this, sql, ...rest));
  };
}

for (let proto: any = PGlite.prototype; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
  for (const name of ['query', 'exec'] as const) {
    if (!Object.prototype.hasOwnProperty.call(proto, name)) continue;
    const orig = proto[name];
    proto[name] = function (this: unknown, sql: string, ...rest: unknown[]) {
      return timed(sql, () => orig.call(this, sql, ...rest));
    };
  }
}

export const sqlStats = {
  /** Start counting (statements before are not counted). */
  start() {
    kinds.clear();
    on = true;
  },
  stop() {
    on = false;
  },
  /** Print the statement kinds by count, per run (`runs`), and the totals. */
  report(runs: number) {
    const all = [...kinds.entries()].sort((a, b) => b[1].n - a[1].n);
    const total = all.reduce((s, [, k]) => s + k.n, 0);
    const ms = all.reduce((s, [, k]) => s + k.ms, 0);
    console.log(`statements: ${total} (${(total / runs).toFixed(1)} per run), ${ms.toFixed(0)} ms inside PGlite`);
    for (const [sql, k] of all) {
      console.log(`${(k.n / runs).toFixed(2).padStart(6)}/run ${k.ms.toFixed(0).padStart(6)} ms  ${sql}`);
    }
    for (const [st, n] of stacks) console.log(`--- ${n}× ${stackOf}\n${st}`);
  },
};

/**
 * `BENCH_LOCK_STATS=ms`: the embedded database's connection lock held longer than `ms` (the holder's stack), the
 * connection being one: every other statement waits that long.
 */
export async function watchLockHolds(minMs: number): Promise<() => void> {
  const { Lock } = await import('../../server/src/db/pglite-dialect.ts');
  const orig = Lock.prototype.acquire;
  const long = new Map<string, { n: number; max: number; total: number }>();
  Lock.prototype.acquire = function (this: InstanceType<typeof Lock>) {
    const where = (new Error().stack ?? '').split('\n').slice(2, 9).join('\n');
    return orig.call(this).then((release) => {
      const t = performance.now();
      return () => {
        const held = performance.now() - t;
        if (held > minMs) {
          const e = long.get(where) ?? { n: 0, max: 0, total: 0 };
          e.n++;
          e.max = Math.max(e.max, held);
          e.total += held;
          long.set(where, e);
        }
        release();
      };
    });
  };
  return () => {
    Lock.prototype.acquire = orig;
    for (const [where, e] of [...long].sort((a, b) => b[1].total - a[1].total).slice(0, 12))
      console.log(
        `lock held > ${minMs} ms: ${e.n}×, max ${e.max.toFixed(0)} ms, total ${e.total.toFixed(0)} ms\n${where}`,
      );
  };
}
