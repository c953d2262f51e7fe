import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase, PGLITE_SETTINGS } from './database.ts';
import { migrateToLatest } from './migrate.ts';
import { migrations } from './migrations/index.ts';
import { schemaKey, seedPath } from './pglite-seed.ts';
import { api, appOverDatabase, createProject, createUser } from '../../test/helpers.ts';
import { waitForIndex } from '../../test/knowledge-helpers.ts';
import { createDocsService } from '../modules/docs/docs.service.ts';
import { DEFAULT_CATALOG_DIR, loadCatalog } from '../modules/sage/catalog.ts';
import { createLocalEmbedder, type Embedder } from '../providers/embeddings/index.ts';

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

describe('the schema image holds the global documents, indexed', () => {
  /** The local embedder (or `inner`), remembering every text it was asked to embed. */
  const counting = (inner: Embedder = createLocalEmbedder()) => {
    const texts: string[] = [];
    return { texts, embedder: { ...inner, embed: (xs: string[]) => (texts.push(...xs), inner.embed(xs)) } };
  };
  /** A new data directory from the schema image (made by `npm install`'s seed-cli.ts when missing). */
  const seeded = async () => {
    execFileSync(process.execPath, ['--import', 'tsx', 'server/src/seed-cli.ts'], { stdio: 'pipe' });
    const dataDir = newDir();
    return { dataDir, database: await openDatabase({ url: undefined, dataDir }) };
  };
  const searchGlobal = async (t: Awaited<ReturnType<typeof appOverDatabase>>, q: string) => {
    const ann = await createUser(t);
    const p = await createProject(t, ann.id);
    const r = await api(
      t.app,
      'GET',
      `/api/crm/projects/${p.name}/rag/search?q=${encodeURIComponent(q)}&include_global=true`,
      {
        token: ann.token,
      },
    );
    expect(r.status).toBe(200);
    return r.body.hits as Array<{ doc_type: string; doc_id: string; scope: string }>;
  };

  it(
    'a new DATA_DIR has the public docs and the skill catalog searchable at once, and its first start embeds none of them',
    { timeout: 180_000 },
    async () => {
      const { dataDir, database } = await seeded();
      // Before any start: every public page and catalog skill is there, embedded by the local embedder.
      const rows = await database.db
        .selectFrom('knowledge_documents')
        .select(['doc_type', 'doc_id', 'scope', 'embedder', 'dims', 'content_hash'])
        .where('project_id', 'is', null)
        .execute();
      const pages = createDocsService().allPages();
      const skills = loadCatalog(DEFAULT_CATALOG_DIR).skills.map((k) => k.name);
      expect(pages.length).toBeGreaterThan(10);
      expect(
        rows
          .filter((r) => r.doc_type === 'doc')
          .map((r) => r.doc_id)
          .sort(),
      ).toEqual([...pages].sort());
      expect(
        rows
          .filter((r) => r.doc_type === 'catalog_skill')
          .map((r) => r.doc_id)
          .sort(),
      ).toEqual([...skills].sort());
      expect(rows.every((r) => r.scope === 'global' && r.embedder === 'local:hash-ngram-v1' && r.dims === 256)).toBe(
        true,
      );
      expect(rows.every((r) => r.content_hash)).toBe(true);

      const { texts, embedder } = counting();
      const t = await appOverDatabase(dataDir, database, { overrides: { embeddings: embedder } });
      try {
        const hits = await searchGlobal(t, 'download the whole wiki as a ZIP');
        expect(hits.some((h) => h.doc_type === 'doc' && h.doc_id === 'en/wiki.md' && h.scope === 'global')).toBe(true);
        await t.services.knowledge.globalDocsSynced();
        // Only the query was embedded: the start found every page unchanged (content hash and embedder).
        expect(texts).toEqual(['download the whole wiki as a ZIP']);
        expect(await t.deps.jobs.pending('knowledge.index')).toBe(0);
      } finally {
        await t.close();
      }
    },
  );

  it(
    'a new DATA_DIR whose configured embedder is not the one the image was made with re-indexes them with it',
    { timeout: 180_000 },
    async () => {
      const { dataDir, database } = await seeded();
      const { texts, embedder } = counting({ ...createLocalEmbedder(64), id: 'test:another-embedder' });
      const t = await appOverDatabase(dataDir, database, { overrides: { embeddings: embedder } });
      try {
        await t.services.knowledge.globalDocsSynced();
        await waitForIndex(t.deps);
        const rows = await t.db
          .selectFrom('knowledge_documents')
          .select(['doc_type', 'embedder', 'dims'])
          .where('project_id', 'is', null)
          .execute();
        expect(rows.length).toBeGreaterThan(10);
        expect(rows.every((r) => r.embedder === 'test:another-embedder' && r.dims === 64)).toBe(true);
        const dims = await t.db.selectFrom('knowledge_chunks').select('dims').distinct().execute();
        expect(dims).toEqual([{ dims: 64 }]);
        expect(texts.length).toBeGreaterThan(rows.length);
        const hits = await searchGlobal(t, 'download the whole wiki as a ZIP');
        expect(hits.some((h) => h.doc_type === 'doc' && h.doc_id === 'en/wiki.md')).toBe(true);
      } finally {
        await t.close();
      }
    },
  );
});
