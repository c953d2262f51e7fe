import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { api, buildTestApp, createProject, createUser, type TestApp } from '../../../test/helpers.ts';
import { waitForIndex } from '../../../test/knowledge-helpers.ts';

let t: TestApp;
let owner: Awaited<ReturnType<typeof createUser>>;
let other: Awaited<ReturnType<typeof createUser>>;
let docs: Awaited<ReturnType<typeof createProject>>;

beforeAll(async () => {
  t = await buildTestApp();
  owner = await createUser(t);
  other = await createUser(t);
  docs = await createProject(t, owner.id, 'docs');
  await createProject(t, owner.id, 'empty');
});
afterAll(async () => {
  await t?.close();
});

const save = (path: string, content: string, token = owner.token) =>
  api(t.app, 'PUT', '/api/crm/projects/docs/wiki/save', { token, body: { path, content } });

/** Unzip a buffer into {name: content}. */
function unzip(buf: Buffer): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buf, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err);
      const files: Record<string, string> = {};
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (e, s) => {
          if (e || !s) return reject(e);
          const chunks: Buffer[] = [];
          s.on('data', (c: Buffer) => chunks.push(c)).on('end', () => {
            files[entry.fileName] = Buffer.concat(chunks).toString('utf8');
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(files)).on('error', reject);
      zip.readEntry();
    });
  });
}

describe('wiki access and validation', () => {
  it('401 / 403 / 400', async () => {
    expect((await api(t.app, 'GET', '/api/crm/projects/docs/wiki/tree')).status).toBe(401);
    expect((await api(t.app, 'GET', '/api/crm/projects/docs/wiki/download')).status).toBe(401);
    expect((await api(t.app, 'GET', '/api/crm/projects/docs/wiki/tree', { token: other.token })).status).toBe(403);
    expect((await api(t.app, 'GET', '/api/crm/projects/docs/wiki/download', { token: other.token })).status).toBe(403);
    expect((await save('a.md', 'x', other.token)).status).toBe(403);
    expect(
      (await api(t.app, 'PUT', '/api/crm/projects/docs/wiki/save', { token: owner.token, body: { path: 'a.md' } }))
        .status,
    ).toBe(400);
    expect((await api(t.app, 'GET', '/api/crm/projects/docs/wiki/file', { token: owner.token })).status).toBe(400);
  });
  it('refuses traversal and absolute page paths', async () => {
    for (const p of ['../x.md', 'a/../../x.md', '/etc/passwd', 'C:/x.md']) {
      const r = await save(p, 'x');
      expect(r.status, p).toBe(403);
      expect(r.body.error).toBe('path_outside_project');
    }
    const enc = await api(t.app, 'GET', '/api/crm/projects/docs/wiki/file?path=%2e%2e%2fsecret.md', {
      token: owner.token,
    });
    expect(enc.status).toBe(403);
    expect((await save('.hidden/x.md', 'x')).status).toBe(400);
  });
});

describe('wiki', () => {
  it('saves, reads, builds the tree and re-embeds in the background', async () => {
    const a = await save('index.md', '# Welcome\n\nStart here.');
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({ path: 'index.md', title: 'Welcome' });
    await save('guides/setup.md', 'Install things.');
    await save('guides/deep/more.md', '# More\nDeeper.');
    await save('guides/setup.md', '# Setup\nInstall things, then run.');
    await waitForIndex(t.deps);
    const indexed = await t.db
      .selectFrom('knowledge_documents')
      .select('doc_id')
      .where('doc_type', '=', 'wiki')
      .where('doc_id', 'in', ['index.md', 'guides/setup.md', 'guides/deep/more.md'])
      .orderBy('doc_id')
      .execute();
    expect(indexed.map((d) => d.doc_id)).toEqual(['guides/deep/more.md', 'guides/setup.md', 'index.md']);
    const r = await api(t.app, 'GET', '/api/crm/projects/docs/wiki/file?path=guides/setup.md', { token: owner.token });
    expect(r.body).toMatchObject({ path: 'guides/setup.md', content: '# Setup\nInstall things, then run.' });
    expect(typeof r.body.updated_at).toBe('string');
    expect(
      (await api(t.app, 'GET', '/api/crm/projects/docs/wiki/file?path=missing.md', { token: owner.token })).status,
    ).toBe(404);
    const tree = await api(t.app, 'GET', '/api/crm/projects/docs/wiki/tree', { token: owner.token });
    expect(tree.body.tree).toEqual([
      {
        path: 'guides',
        title: 'guides',
        children: [
          { path: 'guides/deep', title: 'deep', children: [{ path: 'guides/deep/more.md', title: 'More' }] },
          { path: 'guides/setup.md', title: 'Setup' },
        ],
      },
      { path: 'index.md', title: 'Welcome' },
    ]);
    expect(await t.services.wiki.loadDocument(null, 'index.md')).toBeNull();
  });

  it('downloads the wiki as a ZIP whose entries equal the pages', async () => {
    const pages: Record<string, string> = {};
    for (let i = 0; i < 230; i++)
      pages[`bulk/p${String(i).padStart(3, '0')}.md`] = `# Page ${i}\n${'lorem ipsum '.repeat(i)}ü`;
    // More pages than one read batch (100), written in one statement: saving is proven above, and 230 saves
    // through HTTP, each queueing an index job that the background indexer embeds on the same (embedded,
    // single-connection) database, made this test slow enough to time out under load.
    await t.db
      .insertInto('wiki_pages')
      .values(
        Object.entries(pages).map(([path, content]) => ({
          project_id: docs.id,
          path,
          title: path,
          content,
          updated_by: 'seed',
        })),
      )
      .execute();
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/crm/projects/docs/wiki/download',
      headers: { authorization: `Bearer ${owner.token}` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/zip');
    expect(res.headers['content-disposition']).toBe('attachment; filename="docs-wiki.zip"');
    const files = await unzip(res.rawPayload);
    expect(Object.keys(files).length).toBe(230 + 3);
    for (const [p, c] of Object.entries(pages)) expect(files[p]).toBe(c);
    expect(files['index.md']).toBe('# Welcome\n\nStart here.');
    const empty = await t.app.inject({
      method: 'GET',
      url: '/api/crm/projects/empty/wiki/download',
      headers: { authorization: `Bearer ${owner.token}` },
    });
    expect(await unzip(empty.rawPayload)).toEqual({});
  });
});
