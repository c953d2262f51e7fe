import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, buildTestApp, createProject, createUser, type TestApp } from '../../../test/helpers.ts';

let t: TestApp;
let owner: Awaited<ReturnType<typeof createUser>>;
let other: Awaited<ReturnType<typeof createUser>>;
let admin: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  t = await buildTestApp();
  owner = await createUser(t);
  other = await createUser(t);
  admin = await createUser(t, { role: 'admin' });
  await createProject(t, owner.id, 'kg');
});
afterAll(async () => {
  await t?.close();
});

const u = (p: string) => `/api/crm/projects/kg${p}`;

describe('access', () => {
  it('401 / 403 / 400 for pins, learnings and the graph', async () => {
    for (const p of ['/pins', '/learnings', '/knowledge-graph']) {
      expect((await api(t.app, 'GET', u(p))).status).toBe(401);
      const f = await api(t.app, 'GET', u(p), { token: other.token });
      expect(f.status).toBe(403);
      expect(f.body.error).toBe('forbidden');
    }
    expect((await api(t.app, 'POST', u('/pins'), { token: other.token, body: { text: 'x' } })).status).toBe(403);
    expect((await api(t.app, 'POST', u('/learnings'), { token: other.token, body: { text: 'x' } })).status).toBe(403);
    expect((await api(t.app, 'POST', u('/pins'), { token: owner.token, body: {} })).status).toBe(400);
    expect((await api(t.app, 'POST', u('/learnings'), { token: owner.token, body: { text: '' } })).status).toBe(400);
    expect((await api(t.app, 'DELETE', u('/pins/abc'), { token: owner.token })).status).toBe(400);
  });
});

describe('pins', () => {
  it('pins text with an optional issue or file link, in order; refuses unknown issues and outside paths', async () => {
    const issue = await api(t.app, 'POST', u('/issues'), { token: owner.token, body: { title: 'Pinned issue' } });
    const a = await api(t.app, 'POST', u('/pins'), { token: owner.token, body: { text: 'Remember the deadline' } });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({ text: 'Remember the deadline', issue_id: null, path: null, position: 0 });
    const b = await api(t.app, 'POST', u('/pins'), {
      token: owner.token,
      body: { text: 'See issue', issue_id: issue.body.id },
    });
    const c = await api(t.app, 'POST', u('/pins'), {
      token: owner.token,
      body: { text: 'See file', path: 'docs/./plan.md' },
    });
    expect(b.body.position).toBe(1);
    expect(c.body).toMatchObject({ path: 'docs/plan.md', position: 2 });
    expect(
      (await api(t.app, 'POST', u('/pins'), { token: owner.token, body: { text: 'x', issue_id: 999 } })).body.error,
    ).toBe('issue_not_found');
    expect(
      (await api(t.app, 'POST', u('/pins'), { token: owner.token, body: { text: 'x', path: '../../etc/passwd' } }))
        .status,
    ).toBe(403);
    const list = await api(t.app, 'GET', u('/pins'), { token: owner.token });
    expect(list.body.pins.map((p: any) => p.text)).toEqual(['Remember the deadline', 'See issue', 'See file']);
    expect((await api(t.app, 'DELETE', u(`/pins/${b.body.id}`), { token: other.token })).status).toBe(403);
    expect((await api(t.app, 'DELETE', u(`/pins/${b.body.id}`), { token: owner.token })).body).toEqual({
      ok: true,
      id: b.body.id,
    });
    expect((await api(t.app, 'DELETE', u(`/pins/${b.body.id}`), { token: owner.token })).status).toBe(404);
    expect((await api(t.app, 'GET', u('/pins'), { token: admin.token })).body.pins).toHaveLength(2);
  });
});

describe('learnings', () => {
  it('records lessons with source and tags, newest first, filtered by tag', async () => {
    await api(t.app, 'POST', u('/learnings'), {
      token: owner.token,
      body: { text: 'Run migrations before tests', source: 'worker:Coder', tags: ['db', 'tests'] },
    });
    await api(t.app, 'POST', u('/learnings'), {
      token: owner.token,
      body: { text: 'PGlite is one session', tags: ['db'] },
    });
    const n = await api(t.app, 'POST', u('/learnings'), { token: owner.token, body: { text: 'Pin exact versions' } });
    expect(n.status).toBe(201);
    expect(n.body).toMatchObject({ text: 'Pin exact versions', source: null, tags: [], author: owner.email });
    const all = await api(t.app, 'GET', u('/learnings'), { token: owner.token });
    expect(all.body.learnings.map((l: any) => l.text)).toEqual([
      'Pin exact versions',
      'PGlite is one session',
      'Run migrations before tests',
    ]);
    const db = await api(t.app, 'GET', u('/learnings?tag=db&limit=1'), { token: owner.token });
    expect(db.body.learnings.map((l: any) => l.text)).toEqual(['PGlite is one session']);
  });
});

describe('knowledge graph', () => {
  it('has issues, skills, wiki pages and workers, with assignment, uses and reference edges', async () => {
    const p = await createProject(t, owner.id, 'graph');
    const g = (s: string) => `/api/crm/projects/graph${s}`;
    const w = await t.db
      .insertInto('workers')
      .values({ project_id: p.id, label: 'Writer', context_assets: JSON.stringify(['style']) })
      .returning('id')
      .executeTakeFirstOrThrow();
    const i1 = await api(t.app, 'POST', g('/issues'), {
      token: owner.token,
      body: { title: 'Write the guide', assignee: 'writer', description: 'See [[Style Guide]]' },
    });
    const i2 = await api(t.app, 'POST', g('/issues'), { token: owner.token, body: { title: 'Follow-up of #1' } });
    const sk = await api(t.app, 'POST', g('/skills'), {
      token: owner.token,
      body: { name: 'style', content: 'Applies to #2 and #99' },
    });
    await api(t.app, 'PUT', g('/wiki/save'), {
      token: owner.token,
      body: { path: 'style.md', content: '# Style Guide\nTracked in #1.' },
    });
    await api(t.app, 'POST', u('/skills'), { token: owner.token, body: { name: 'elsewhere' } });
    const r = await api(t.app, 'GET', g('/knowledge-graph'), { token: owner.token });
    expect(r.status).toBe(200);
    const ids = r.body.nodes.map((n: any) => n.id);
    expect(ids).toEqual(
      expect.arrayContaining([
        `issue:${i1.body.id}`,
        `issue:${i2.body.id}`,
        `skill:${sk.body.id}`,
        'wiki:style.md',
        `worker:${w.id}`,
      ]),
    );
    expect(r.body.nodes.find((n: any) => n.label === 'elsewhere')).toBeUndefined();
    expect(r.body.edges).toEqual(
      expect.arrayContaining([
        { source: `worker:${w.id}`, target: 'issue:1', type: 'assignment' },
        { source: `worker:${w.id}`, target: `skill:${sk.body.id}`, type: 'uses' },
        { source: 'issue:1', target: 'wiki:style.md', type: 'reference' },
        { source: 'issue:2', target: 'issue:1', type: 'reference' },
        { source: `skill:${sk.body.id}`, target: 'issue:2', type: 'reference' },
        { source: 'wiki:style.md', target: 'issue:1', type: 'reference' },
      ]),
    );
    expect(r.body.edges.find((e: any) => e.target === 'issue:99')).toBeUndefined();
  });
});
