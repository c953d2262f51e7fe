/**
 * `npm install` (the `prepare` script): make the embedded database's seed images (db/pglite-seed.ts) once, so a
 * first start on a new DATA_DIR runs neither initdb nor the migrations. The bare image: a throw-away data directory
 * opened with none present writes it. The schema image: another one, from the bare image, migrated and with the
 * job queue's schema installed, frozen, checkpointed and dumped. Prints one line per image; a failure is reported
 * without failing the install (a first start then does that work itself).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, PGLITE_SETTINGS } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { migrations } from './db/migrations/index.ts';
import { schemaKey, seedPath, writeSeed } from './db/pglite-seed.ts';
import { createJobQueue } from './jobs/queue.ts';
import { silentLogger } from './lib/logger.ts';
import { createLocalEmbedder } from './providers/embeddings/index.ts';

const quiet = { error() {}, warn() {} };
const say = (line: string) => process.stdout.write(`${line}\n`);
const shown = (f: string) => path.relative(process.cwd(), f);

/** Open a new data directory (from the bare image when present), run `fn`, remove it. */
async function withNewDatabase(fn: (db: Awaited<ReturnType<typeof openDatabase>>) => Promise<void>): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'crm-seed-'));
  try {
    const database = await openDatabase({ url: undefined, dataDir });
    try {
      await fn(database);
    } finally {
      await database.close();
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

try {
  const bare = seedPath(PGLITE_SETTINGS);
  const schema = seedPath(PGLITE_SETTINGS, schemaKey(migrations));
  if (!bare || !schema) throw new Error('the PGlite packages were not found');
  const t0 = performance.now();
  if (!fs.existsSync(bare)) await withNewDatabase(async () => {});
  say(
    `database seed image: ${shown(bare)} (${fs.existsSync(bare) ? `${Math.round(performance.now() - t0)} ms` : 'not written'})`,
  );
  const t1 = performance.now();
  let documents: number | undefined;
  if (!fs.existsSync(schema))
    await withNewDatabase(async (database) => {
      await migrateToLatest(database.db);
      const queue = createJobQueue(database, quiet);
      await queue.start();
      try {
        // The composition root loads every area's modules: imported here, so a failure is reported and the image is
        // still written without the documents (a first start then indexes them, as on a database made without it).
        const { indexPlatformDocuments } = await import('./services.ts');
        documents = await indexPlatformDocuments({
          database,
          jobs: queue,
          embedder: createLocalEmbedder(),
          log: silentLogger,
        });
      } catch (err) {
        process.stderr.write(`global documents not indexed into the schema image: ${(err as Error).message}\n`);
      } finally {
        await queue.stop();
      }
      await database.executeSql('vacuum freeze analyze');
      await database.executeSql('checkpoint');
      if (!(await writeSeed(schema, await database.dump!()))) throw new Error(`${shown(schema)} could not be written`);
    });
  say(
    `database schema image: ${shown(schema)} (${Math.round(performance.now() - t1)} ms${documents === undefined ? '' : `, ${documents} global documents indexed`})`,
  );
} catch (err) {
  process.stderr.write(`database seed images not made: ${(err as Error).message}\n`);
}
