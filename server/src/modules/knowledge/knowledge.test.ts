import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { api, buildTestApp, createProject, createUser, TEST_KEYS, type TestApp } from '../../../test/helpers.ts';
import { memoryDocs, waitForIndex } from '../../../test/knowledge-helpers.ts';
import { startLlmStandIn } from '../../../test/standins/llm.ts';
import { buildApp } from '../../app.ts';
import { createDeps } from '../../deps.ts';
import { silentLogger as silent } from '../../lib/logger.ts';
import { createServices } from '../../services.ts';

describe('semantic index and RAG search', () => {
  let t: TestApp;
  let store: ReturnType<typeof memoryDocs>;
  let ann: Awaited<ReturnType<typeof createUser>>;
  let bob: Awaited<ReturnType<typeof createUser>>;
  let annA: { id: number; name: string; dir: string };
  let annB: { id: number; name: string; dir: string };
  let bobA: { id: number; name: string; dir: string };
  const search = (token: string, project: string, qs: string) =>
    api(t.app, 'GET', `/api/crm/projects/${project}/rag/search?${qs}`, { token });

  beforeAll(async () => {
    store = memoryDocs();
    t = await buildTestApp(store.app());
    ann = await createUser(t);
    bob = await createUser(t);
    annA = await createProject(t, ann.id, 'alpha');
    annB = await createProject(t, ann.id, 'beta');
    bobA = await createProject(t, bob.id, 'alpha-bob'); // another owner's project (names are unique)
    await store.put(
      annA.id,
      'wiki',
      'ops/runbook.md',
      'Runbook',
      '# Runbook\n\n## Backups\n\nThe quokka ledger reconciles every Tuesday at dawn.\n\n## Deploys\n\nDeploys go out through the blue pipeline.',
    );
    await store.put(
      annA.id,
      'issue',
      '12',
      'Issue 12: login loop',
      'Users see a login loop after the password reset e-mail.',
    );
    await store.put(
      annB.id,
      'wiki',
      'secret.md',
      'Beta secrets',
      'The flamingo cipher lives in the beta project only.',
    );
    await store.put(
      bobA.id,
      'wiki',
      'bob.md',
      'Bob notes',
      'The flamingo cipher and the quokka ledger belong to Bob too.',
    );
    await store.put(
      null,
      'skill',
      '7',
      'Global skill: incident triage',
      'Triage incidents with the narwhal checklist first.',
    );
    for (let i = 0; i < 9; i++)
      await store.put(
        annA.id,
        'transcript',
        `t${i}`,
        `Standup ${i}`,
        `Standup meeting ${i} talked about the narwhal checklist and release ${i}.`,
      );
    await waitForIndex(t.deps);
  });
  afterAll(async () => t?.close());

  it('finds a distinctive phrase saved in a document, with the documented hit fields', async () => {
    const r = await search(ann.token, 'alpha', 'q=quokka%20ledger%20reconciles');
    expect(r.status).toBe(200);
    expect(r.body.query).toBe('quokka ledger reconciles');
    expect(r.body.project).toBe('alpha');
    const top = r.body.hits[0];
    expect(top).toMatchObject({ rank: 1, doc_type: 'wiki', doc_id: 'ops/runbook.md', chunk_ix: 0, scope: 'project' });
    expect(top.title).toBe('Runbook › Backups');
    expect(top.text).toContain('quokka ledger');
    expect(typeof top.distance).toBe('number');
    expect(top.distance).toBeLessThan(0.8);
    expect(r.body.hits.map((h: any) => h.rank)).toEqual(r.body.hits.map((_: unknown, i: number) => i + 1));
  });

  it("never shows another user's or another project's documents", async () => {
    const a = await search(ann.token, 'alpha', 'q=flamingo%20cipher&k=25');
    expect(a.status).toBe(200);
    expect(a.body.hits.map((h: any) => h.doc_id)).not.toContain('secret.md');
    expect(a.body.hits.map((h: any) => h.doc_id)).not.toContain('bob.md');
    const b = await search(ann.token, 'beta', 'q=flamingo%20cipher&k=25');
    expect(b.body.hits[0].doc_id).toBe('secret.md');
    expect(b.body.hits.map((h: any) => h.doc_id)).not.toContain('bob.md');
    expect(b.body.hits.map((h: any) => h.doc_id)).not.toContain('ops/runbook.md');
    const c = await search(bob.token, bobA.name, 'q=quokka%20ledger&k=25');
    expect(c.body.hits[0].doc_id).toBe('bob.md');
    expect(c.body.hits.every((h: any) => h.doc_id === 'bob.md' || h.scope === 'global')).toBe(true);
  });

  it('honours k, doc_types and include_global', async () => {
    const d = await search(ann.token, 'alpha', 'q=narwhal%20checklist');
    expect(d.body.hits).toHaveLength(6);
    const k3 = await search(ann.token, 'alpha', 'q=narwhal%20checklist&k=3');
    expect(k3.body.hits).toHaveLength(3);
    const k25 = await search(ann.token, 'alpha', 'q=narwhal%20checklist&k=25');
    expect(k25.body.hits.length).toBeGreaterThanOrEqual(12);
    expect(k25.body.hits.some((h: any) => h.scope === 'global' && h.doc_type === 'skill' && h.doc_id === '7')).toBe(
      true,
    );
    const noGlobal = await search(ann.token, 'alpha', 'q=narwhal%20checklist&k=25&include_global=false');
    expect(noGlobal.body.hits.length).toBeGreaterThan(0);
    expect(noGlobal.body.hits.every((h: any) => h.scope === 'project')).toBe(true);
    const issues = await search(ann.token, 'alpha', 'q=login%20loop&doc_types=issue');
    expect(issues.body.hits.length).toBe(1);
    expect(issues.body.hits[0]).toMatchObject({ doc_type: 'issue', doc_id: '12' });
    const two = await search(ann.token, 'alpha', 'q=narwhal&k=25&doc_types=skill,transcript');
    expect(new Set(two.body.hits.map((h: any) => h.doc_type))).toEqual(new Set(['skill', 'transcript']));
    for (const bad of ['k=0', 'k=26', 'k=abc', 'doc_types=wiki,bogus', 'include_global=maybe']) {
      const r = await search(ann.token, 'alpha', `q=x&${bad}`);
      expect(r.status, bad).toBe(400);
    }
    expect((await search(ann.token, 'alpha', '')).status).toBe(400);
  });

  it('answers 401 without a token, 403 for a project of another user, 404 for an unknown project', async () => {
    expect((await api(t.app, 'GET', '/api/crm/projects/alpha/rag/search?q=x')).status).toBe(401);
    expect((await search(bob.token, 'beta', 'q=x')).status).toBe(403);
    expect((await search(ann.token, 'nope', 'q=x')).status).toBe(404);
    for (const p of ['refresh', 'fetch-artifact']) {
      expect((await api(t.app, 'POST', `/api/crm/projects/alpha/memory/${p}`)).status).toBe(401);
      expect((await api(t.app, 'POST', `/api/crm/projects/beta/memory/${p}`, { token: bob.token })).status).toBe(403);
      expect((await api(t.app, 'POST', `/api/crm/projects/nope/memory/${p}`, { token: ann.token })).status).toBe(404);
    }
    const admin = await createUser(t, { role: 'admin' });
    expect((await search(admin.token, 'beta', 'q=flamingo')).status).toBe(200);
  });

  it('memory/fetch-artifact is always 410', async () => {
    const r = await api(t.app, 'POST', '/api/crm/projects/alpha/memory/fetch-artifact', { token: ann.token });
    expect(r.status).toBe(410);
    expect(r.body.error).toBe('gone');
  });

  it('deletion removes the chunks; an unchanged document is skipped', async () => {
    const docRow = () =>
      t.db.selectFrom('knowledge_documents').selectAll().where('doc_id', '=', 'secret.md').executeTakeFirst();
    const before = await docRow();
    await store.put(
      annB.id,
      'wiki',
      'secret.md',
      'Beta secrets',
      'The flamingo cipher lives in the beta project only.',
    );
    await waitForIndex(t.deps);
    expect((await docRow())!.indexed_at.getTime()).toBe(before!.indexed_at.getTime());
    await store.remove(annB.id, 'wiki', 'secret.md');
    await waitForIndex(t.deps);
    expect(await docRow()).toBeUndefined();
    const n = await t.db
      .selectFrom('knowledge_chunks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('doc_id', '=', 'secret.md')
      .executeTakeFirstOrThrow();
    expect(Number(n.n)).toBe(0);
    const r = await search(ann.token, 'beta', 'q=flamingo%20cipher');
    expect(r.body.hits.map((h: any) => h.doc_id)).not.toContain('secret.md');
  });

  it('re-indexing a changed document replaces its chunks in place', async () => {
    const long = [
      '# Handbook',
      ...Array.from(
        { length: 8 },
        (_, i) => `## Part ${i}\n\n${`Paragraph about topic ${i} with some words. `.repeat(40)}`,
      ),
    ].join('\n\n');
    await store.put(annA.id, 'wiki', 'handbook.md', 'Handbook', long);
    await waitForIndex(t.deps);
    const chunks = await t.db
      .selectFrom('knowledge_chunks')
      .select(['chunk_ix', 'title'])
      .where('doc_id', '=', 'handbook.md')
      .orderBy('chunk_ix')
      .execute();
    expect(chunks.length).toBeGreaterThan(8);
    expect(chunks.map((c) => c.chunk_ix)).toEqual(chunks.map((_, i) => i));
    expect(chunks[0].title).toBe('Handbook › Part 0');
    await store.put(annA.id, 'wiki', 'handbook.md', 'Handbook', '# Handbook\n\nNow short: the axolotl rota.');
    await waitForIndex(t.deps);
    const after = await t.db
      .selectFrom('knowledge_chunks')
      .select(['chunk_ix', 'text'])
      .where('doc_id', '=', 'handbook.md')
      .execute();
    expect(after).toHaveLength(1);
    expect((await search(ann.token, 'alpha', 'q=axolotl%20rota')).body.hits[0].doc_id).toBe('handbook.md');
  });

  it('keeps the per-project chunk counts equal to the chunks through indexing, re-indexing and removal', async () => {
    const counts = async () => {
      const real = await sql<{ k: number; n: number }>`
        select coalesce(project_id, 0) as k, count(*)::int as n from knowledge_chunks group by 1 order by 1`.execute(
        t.db,
      );
      const kept = await sql<{ k: number; n: number }>`
        select project_key as k, chunks::int as n from knowledge_chunk_counts where chunks <> 0 order by 1`.execute(
        t.db,
      );
      return {
        real: real.rows.map((r) => [Number(r.k), Number(r.n)]),
        kept: kept.rows.map((r) => [Number(r.k), Number(r.n)]),
      };
    };
    await store.put(annB.id, 'wiki', 'counted.md', 'Counted', `# Counted\n\n${'Words about the heron. '.repeat(300)}`);
    await waitForIndex(t.deps);
    let c = await counts();
    expect(c.kept).toEqual(c.real);
    expect(c.real.find(([k]) => k === annB.id)?.[1]).toBeGreaterThan(1);
    await store.put(annB.id, 'wiki', 'counted.md', 'Counted', '# Counted\n\nShort now.');
    await waitForIndex(t.deps);
    c = await counts();
    expect(c.kept).toEqual(c.real);
    await store.remove(annB.id, 'wiki', 'counted.md');
    await waitForIndex(t.deps);
    c = await counts();
    expect(c.kept).toEqual(c.real);
  });

  it('memory/refresh embeds the manifest and key files of the working directory, and drops removed ones', async () => {
    fs.writeFileSync(path.join(annA.dir, 'README.md'), '# Alpha\n\nAlpha builds the pelican dashboard.');
    fs.mkdirSync(path.join(annA.dir, 'docs'), { recursive: true });
    fs.writeFileSync(path.join(annA.dir, 'docs', 'setup.md'), '# Setup\n\nInstall the walrus toolkit first.');
    fs.writeFileSync(path.join(annA.dir, 'notes.txt'), 'not a key file: the pelican secret');
    const r = await api(t.app, 'POST', '/api/crm/projects/alpha/memory/refresh', { token: ann.token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ok: true, project: 'alpha', removed: [] });
    expect(r.body.queued).toEqual(['project-manifest', 'README.md', 'docs/setup.md']);
    expect(r.body.cut).toEqual([]);
    await waitForIndex(t.deps);
    const hit = await search(ann.token, 'alpha', 'q=pelican%20dashboard');
    expect(hit.body.hits[0]).toMatchObject({ doc_type: 'memory', doc_id: 'README.md' });
    expect((await search(ann.token, 'alpha', 'q=walrus%20toolkit')).body.hits[0].doc_id).toBe('docs/setup.md');
    fs.rmSync(path.join(annA.dir, 'README.md'));
    const again = await api(t.app, 'POST', '/api/crm/projects/alpha/memory/refresh', { token: ann.token });
    expect(again.body.removed).toEqual(['README.md']);
    await waitForIndex(t.deps);
    const gone = await search(ann.token, 'alpha', 'q=pelican%20dashboard&k=25');
    expect(gone.body.hits.map((h: any) => h.doc_id)).not.toContain('README.md');

    // A key file past the cap is indexed from its beginning, and the answer and the index say so.
    const big = `# Big\n\n${'The heron ledger grows. '.repeat(12_000)}`;
    fs.writeFileSync(path.join(annA.dir, 'docs', 'big.md'), big);
    const cut = await api(t.app, 'POST', '/api/crm/projects/alpha/memory/refresh', { token: ann.token });
    expect(cut.body.cut).toEqual([
      { doc_id: 'docs/big.md', indexed_bytes: 256 * 1024, total_bytes: Buffer.byteLength(big) },
    ]);
    await waitForIndex(t.deps);
    const doc = await t.db
      .selectFrom('knowledge_documents')
      .select(['indexed_chars', 'total_chars'])
      .where('doc_type', '=', 'memory')
      .where('doc_id', '=', 'docs/big.md')
      .executeTakeFirstOrThrow();
    expect(Number(doc.total_chars)).toBe(big.length);
    expect(Number(doc.indexed_chars)).toBeLessThanOrEqual(256 * 1024);
    fs.rmSync(path.join(annA.dir, 'docs', 'big.md'));
  });

  it('/readyz shows the vector search mode chosen at start', async () => {
    const r = await api(t.app, 'GET', '/readyz');
    expect(r.body.vector_search).toBe(t.database.vector ? 'pgvector-hnsw' : 'exact-scan');
    if (t.database.vector) {
      const idx = await sql<{
        n: number;
      }>`select count(*)::int as n from pg_indexes where indexname = 'knowledge_chunks_hnsw_256'`.execute(t.db);
      expect(idx.rows[0].n).toBe(1);
    }
  });
});

describe('durable indexing across restarts and embedder changes', () => {
  let t: TestApp;
  let s: Awaited<ReturnType<typeof startLlmStandIn>>;
  const store = memoryDocs();
  beforeAll(async () => {
    s = await startLlmStandIn();
    t = await buildTestApp(store.app());
  });
  afterAll(async () => {
    await t?.close();
    await s?.close();
  });

  it('finishes queued index jobs after the queue stops mid-way and starts again', async () => {
    const ann = await createUser(t);
    const p = await createProject(t, ann.id, 'gamma');
    await waitForIndex(t.deps);
    for (let i = 0; i < 15; i++)
      await store.put(p.id, 'wiki', `page-${i}.md`, `Page ${i}`, `Page ${i} mentions the ibex registry number ${i}.`);
    await t.deps.jobs.stop();
    expect(
      await t.db
        .selectFrom('knowledge_documents')
        .select('id')
        .where('project_id', '=', p.id)
        .execute()
        .then((r) => r.length),
    ).toBeLessThan(15);
    await t.deps.jobs.start();
    await waitForIndex(t.deps);
    const docs = await t.db.selectFrom('knowledge_documents').select('doc_id').where('project_id', '=', p.id).execute();
    expect(docs).toHaveLength(15);
  });

  it('re-indexes everything with the new embedder after a restart with another one, without mixing spaces', async () => {
    const ann = await createUser(t);
    const p = await createProject(t, ann.id, 'delta');
    await store.put(p.id, 'wiki', 'moth.md', 'Moth', 'The luna moth migration schedule is kept here.');
    await waitForIndex(t.deps);
    const before = await t.db
      .selectFrom('knowledge_documents')
      .select(['embedder', 'dims'])
      .where('doc_id', '=', 'moth.md')
      .executeTakeFirstOrThrow();
    expect(before).toEqual({ embedder: 'local:hash-ngram-v1', dims: 256 });
    await t.app.close();

    // "Restart" over the same database with EMBEDDINGS_URL set (the stand-in answers 64-dimensional vectors).
    const config = { ...t.config, embeddingsUrl: s.openaiUrl, embeddingsModel: 'test-embed-1' };
    const deps = createDeps(config, t.database, TEST_KEYS, silent);
    // The same in-memory documents (the wiki area's own loader would not know moth.md).
    const app2 = await buildApp(deps, { logger: false, services: createServices(deps, { loaders: store.loaders }) });
    try {
      await app2.ready();
      await waitForIndex(deps);
      const docs = await t.db.selectFrom('knowledge_documents').select(['doc_type', 'embedder', 'dims']).execute();
      expect(docs.length).toBeGreaterThanOrEqual(1);
      expect(docs.every((d) => d.embedder === 'openai:test-embed-1' && d.dims === 64)).toBe(true);
      const dims = await t.db.selectFrom('knowledge_chunks').select('dims').distinct().execute();
      expect(dims).toEqual([{ dims: 64 }]);
      expect(s.requests.some((r) => r.path === '/v1/embeddings' && r.body.model === 'test-embed-1')).toBe(true);
      const r = await api(app2, 'GET', '/api/crm/projects/delta/rag/search?q=luna%20moth%20migration', {
        token: ann.token,
      });
      expect(r.status).toBe(200);
      expect(r.body.hits[0].doc_id).toBe('moth.md');
      expect(await deps.jobs.pending('knowledge.index')).toBe(0);
    } finally {
      await app2.close();
    }
  });
});
