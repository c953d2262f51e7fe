/** `npm run bench`: run every benchmark file of bench/ in sequence, each in its own process. */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const dir = import.meta.dirname;
const files = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.endsWith('.d.ts'))
  .sort();
let failed = 0;
for (const f of files) {
  console.log(`\n=== ${f} ===`);
  const res = spawnSync(process.execPath, ['--import', 'tsx', path.join(dir, f)], {
    stdio: 'inherit',
    cwd: path.resolve(dir, '..'),
  });
  if (res.status !== 0) {
    failed++;
    console.error(`${f} failed (exit ${res.status})`);
  }
}
process.exit(failed ? 1 : 0);
