/**
 * `npm run bench`: run every benchmark file of bench/ in sequence, each in its own process, its output shown as
 * it comes; then a summary table of every bench's final machine-readable line (`BENCH {json}`, printed by
 * `benchLine` of bench/lib/util.ts): status, time taken, and the figures of that line.
 *
 *   npm run bench                      (all)
 *   npm run bench -- startup cli-heartbeat   (only these, by file name without .ts)
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { table } from './lib/util.ts';

const dir = import.meta.dirname;
const only = process.argv.slice(2).map((a) => a.replace(/\.ts$/, ''));
const files = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.endsWith('.d.ts'))
  .filter((f) => only.length === 0 || only.includes(f.replace(/\.ts$/, '')))
  .sort();

/** Run one bench file; its stdout and stderr pass through. @returns exit code, seconds, and its BENCH lines. */
async function runOne(f: string): Promise<{ code: number | null; seconds: number; lines: Record<string, unknown>[] }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(dir, f)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    cwd: path.resolve(dir, '..'),
  });
  const lines: Record<string, unknown>[] = [];
  let rest = '';
  child.stdout.on('data', (d: Buffer) => {
    process.stdout.write(d);
    const parts = (rest + d.toString('utf8')).split('\n');
    rest = parts.pop() ?? '';
    for (const line of parts) {
      if (!line.startsWith('BENCH ')) continue;
      try {
        lines.push(JSON.parse(line.slice('BENCH '.length)));
      } catch {
        /* not a summary line after all */
      }
    }
  });
  const code = await new Promise<number | null>((r) => child.on('close', (c) => r(c)));
  return { code, seconds: (performance.now() - t0) / 1000, lines };
}

/** A summary line's figures as `key=value` pairs (nested objects flattened with dots). */
function figures(o: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(o).flatMap(([k, v]) =>
    k === 'name' && !prefix
      ? []
      : v && typeof v === 'object' && !Array.isArray(v)
        ? figures(v as Record<string, unknown>, `${prefix}${k}.`)
        : [`${prefix}${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`],
  );
}

const rows: string[][] = [];
let failed = 0;
for (const f of files) {
  console.log(`\n=== ${f} ===`);
  const r = await runOne(f);
  if (r.code !== 0) {
    failed++;
    console.error(`${f} failed (exit ${r.code})`);
  }
  const status = r.code === 0 ? 'ok' : `failed (${r.code})`;
  if (r.lines.length === 0) rows.push([f, status, r.seconds.toFixed(0), '(no BENCH line)']);
  for (const l of r.lines) rows.push([String(l.name ?? f), status, r.seconds.toFixed(0), figures(l).join(' ')]);
}
console.log('\n=== summary (BENCH lines; bench/README.md explains each figure and its baseline) ===\n');
console.log(table(['bench', 'status', 's', 'figures'], rows));
process.exit(failed ? 1 : 0);
