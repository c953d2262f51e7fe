/**
 * `npm install` (the `prepare` script): make the embedded database's seed image (db/pglite-seed.ts) once, so the
 * first start on a new DATA_DIR does not run initdb. Opens a throw-away data directory, which writes the image,
 * and removes it. Prints one line; a failure is reported without failing the install (the first start then runs
 * initdb and writes the image itself).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, PGLITE_SETTINGS } from './database.ts';
import { seedPath } from './pglite-seed.ts';

const file = seedPath(PGLITE_SETTINGS);
if (file && fs.existsSync(file)) {
  process.stdout.write(`database seed image: ${path.relative(process.cwd(), file)} (present)\n`);
} else {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'crm-seed-'));
  try {
    const t0 = performance.now();
    const database = await openDatabase({ url: undefined, dataDir });
    await database.close();
    const made = file !== undefined && fs.existsSync(file);
    process.stdout.write(
      made
        ? `database seed image: ${path.relative(process.cwd(), file)} (${Math.round(performance.now() - t0)} ms)\n`
        : 'database seed image not written: the first start on a new DATA_DIR runs initdb\n',
    );
  } catch (err) {
    process.stderr.write(`database seed image not made: ${(err as Error).message}\n`);
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
