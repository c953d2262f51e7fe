import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase, PGLITE_SETTINGS } from './database.ts';
import { migrateToLatest } from './migrate.ts';
import { migrations } from './migrations/index.ts';
import { schemaKey, seedPath } from './pglite-seed.ts';

// The seed image belongs to the embedded database on disk, so this file always opens PGlite in a DATA_DIR.
const dirs: string[] = [];
const newDir = () => {
  const d = fs.mkdtempSync(path.join(path.resolve('.tmp'), 'seed-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** Open a new data directory and read its system identifier (made by initdb, copied with a seed image). */
async function systemId(seed?: boolean): Promise<string> {
  const database = await openDatabase({ url: undefined, dataDir: newDir(), ...(seed === false ? { seed } : {}) });
  try {
    const r = await sql<{ id: string }>`select system_identifier::text as id from pg_control_system()`.execute(
      database.db,
    );
    const v = await sql<{ n: number }>`select count(*)::int as n from pg_extension where extname = 'vector'`.execute(
      database.db,
    );
    expect(v.rows[0].n).toBe(1);
    return r.rows[0].id;
  } finally {
    await database.close();
  }
}

describe('a new embedded data directory starts from the seed image', () => {
  it(
    'writes the image when there is none, then unpacks it instead of running initdb',
    { timeout: 180_000 },
    async () => {
      const first = await systemId();
      const file = seedPath(PGLITE_SETTINGS)!;
      expect(fs.existsSync(file)).toBe(true);
      // Another new directory is a copy of the image: the same system identifier, and pgvector present.
      expect(await systemId()).toBe(await systemId());
      // Without the image, initdb makes a database of its own.
      const own = await systemId(false);
      expect(own).not.toBe(await systemId());
      expect(first).toMatch(/^\d+$/);
    },
  );

  it(
    'npm install makes the schema image: a new data directory has every migration and the job queue schema',
    {
      timeout: 180_000,
    },
    async () => {
      execFileSync(process.execPath, ['--import', 'tsx', 'server/src/seed-cli.ts'], { stdio: 'pipe' });
      expect(fs.existsSync(seedPath(PGLITE_SETTINGS, schemaKey(migrations))!)).toBe(true);
      const database = await openDatabase({ url: undefined, dataDir: newDir() });
      try {
        expect(await migrateToLatest(database.db)).toEqual([]);
        const boss = await sql<{
          n: number;
        }>`select count(*)::int as n from pg_namespace where nspname = 'pgboss'`.execute(database.db);
        expect(boss.rows[0].n).toBe(1);
      } finally {
        await database.close();
      }
      // Without the images, the migrations run.
      const own = await openDatabase({ url: undefined, dataDir: newDir(), seed: false });
      try {
        expect((await migrateToLatest(own.db)).length).toBe(Object.keys(migrations).length);
      } finally {
        await own.close();
      }
    },
  );
});
