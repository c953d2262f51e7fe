import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { api, buildTestApp, createProject, createUser, type TestApp } from '../../../test/helpers.ts';
import { waitForIndex } from '../../../test/knowledge-helpers.ts';

let t: TestApp;
let owner: Awaited<ReturnType<typeof createUser>>;
let other: Awaited<ReturnType<typeof createUser>>;
let admin: Awaited<ReturnType<typeof createUser>>;
let proj: Awaited<ReturnType<typeof createProject>>;
let workerId: number;

beforeAll(async () => {
  t = await buildTestApp();
  owner = await createUser(t);
  other = await createUser(t);
  admin = await createUser(t, { role: 'admin' });
  proj = await createProject(t, owner.id, 'alpha');
  const w = await t.db
    .insertInto('workers')
    .values({ project_id: proj.id, label: 'Coder' })
    .returning('id')
    .executeTakeFirstOrThrow();
  workerId = w.id;
});
afterAll(async () => {
  await t?.close();
});

const url = (p = '') => `/api/crm/projects/alpha/issues${p}`;
const create = (body: object, token = owner.token) => api(t.app, 'POST', url(), { token, body });

describe('issue access', () => {
  it('401 without a token, 403 on another user’s project, 404 for an unknown project, admin allowed', async () => {
    expect((await api(t.app, 'GET', url())).status).toBe(401);
    expect((await api(t.app, 'PUT', '/api/mcp/issues/alpha/1', { body: { status: 'open' } })).status).toBe(401);
    const f = await api(t.app, 'GET', url(), { token: other.token });
    expect(f.status).toBe(403);
    expect(f.body.error).toBe('forbidden');
    expect(
      (await api(t.app, 'POST', '/api/mcp/issues/alpha/1/log', { token: other.token, body: { message: 'x' } })).status,
    ).toBe(403);
    expect((await api(t.app, 'GET', '/api/crm/projects/nope/issues', { token: owner.token })).status).toBe(404);
    expect((await api(t.app, 'GET', url(), { token: admin.token })).status).toBe(200);
  });
  it('400 for bad bodies and filters', async () => {
    const a = await create({});
    expect(a.status).toBe(400);
    expect(a.body.error).toBe('invalid_request');
    expect((await create({ title: 'x', priority: 'P9' })).status).toBe(400);
    expect((await api(t.app, 'GET', url('?status=done'), { token: owner.token })).status).toBe(400);
    expect((await api(t.app, 'GET', url('/abc'), { token: owner.token })).status).toBe(400);
  });
});

describe('issues', () => {
  it('numbers issues per project and reads them back with activity', async () => {
    const a = await create({ title: 'First', description: 'do it', priority: 'P1', labels: ['bug'] });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({
      id: 1,
      title: 'First',
      status: 'open',
      assignee: null,
      priority: 'P1',
      labels: ['bug'],
    });
    expect(a.body.activity[0]).toMatchObject({ kind: 'create' });
    const b = await create({ title: 'Second' });
    expect(b.body.id).toBe(2);
    expect(b.body.priority).toBe('P2');
    const p2 = await createProject(t, owner.id, 'beta');
    const c = await api(t.app, 'POST', '/api/crm/projects/beta/issues', {
      token: owner.token,
      body: { title: 'Other' },
    });
    expect(c.body.id).toBe(1);
    const got = await api(t.app, 'GET', url('/1'), { token: owner.token });
    expect(got.status).toBe(200);
    expect(got.body.description).toBe('do it');
    expect((await api(t.app, 'GET', url('/999'), { token: owner.token })).body.error).toBe('issue_not_found');
    expect(p2.id).toBeGreaterThan(0);
  });

  it('accepts exactly the five statuses on the workers’ route', async () => {
    const { body } = await create({ title: 'Statuses' });
    for (const s of ['open', 'in_progress', 'blocked', 'deferred', 'closed']) {
      const r = await api(t.app, 'PUT', `/api/mcp/issues/alpha/${body.id}`, {
        token: owner.token,
        body: { status: s },
      });
      expect(r.status).toBe(200);
      expect(r.body.status).toBe(s);
    }
    for (const s of ['done', 'OPEN', '']) {
      const r = await api(t.app, 'PUT', `/api/mcp/issues/alpha/${body.id}`, {
        token: owner.token,
        body: { status: s },
      });
      expect(r.status).toBe(400);
    }
    expect((await api(t.app, 'PUT', url(`/${body.id}`), { token: owner.token, body: { status: 'done' } })).status).toBe(
      400,
    );
  });

  it('taking an issue sets in_progress and the assignee, logs it and records issue_pick for the worker', async () => {
    const { body } = await create({ title: 'Take me' });
    const r = await api(t.app, 'PUT', `/api/mcp/issues/alpha/${body.id}`, {
      token: owner.token,
      body: { status: 'in_progress', assignee: 'coder' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'in_progress', assignee: 'coder' });
    expect(r.body.activity.at(-1)).toMatchObject({ kind: 'take', message: 'taken by coder' });
    const ev = await t.db
      .selectFrom('activity_log')
      .selectAll()
      .where('type', '=', 'issue_pick')
      .where('project_id', '=', proj.id)
      .execute();
    const mine = ev.find((e) => (e.payload as any).issue_id === body.id);
    expect(mine?.worker_id).toBe(workerId);
    const closed = await api(t.app, 'PUT', `/api/mcp/issues/alpha/${body.id}`, {
      token: owner.token,
      body: { status: 'closed', author: String(workerId) },
    });
    expect(closed.body.status).toBe('closed');
    const ce = await t.db
      .selectFrom('activity_log')
      .selectAll()
      .where('type', '=', 'issue_close')
      .where('project_id', '=', proj.id)
      .execute();
    expect(ce.find((e) => (e.payload as any).issue_id === body.id)?.worker_id).toBe(workerId);
  });

  it('log: ts kept when past, clamped when future, 400 when invalid; records issue_log', async () => {
    const { body } = await create({ title: 'Logged' });
    const past = '2025-03-04T05:06:07Z';
    const a = await api(t.app, 'POST', `/api/mcp/issues/alpha/${body.id}/log`, {
      token: owner.token,
      body: { message: 'did a thing', author: 'Coder', ts: past },
    });
    expect(a.status).toBe(200);
    expect(a.body.ok).toBe(true);
    expect(a.body.entry).toMatchObject({ author: 'Coder', message: 'did a thing' });
    expect(new Date(a.body.entry.ts).toISOString()).toBe('2025-03-04T05:06:07.000Z');
    const before = Date.now();
    const b = await api(t.app, 'POST', `/api/mcp/issues/alpha/${body.id}/log`, {
      token: owner.token,
      body: { message: 'from the future', ts: '2999-01-01T00:00:00Z' },
    });
    expect(b.status).toBe(200);
    const ts = new Date(b.body.entry.ts).getTime();
    expect(ts).toBeGreaterThanOrEqual(before - 1000);
    expect(ts).toBeLessThanOrEqual(Date.now() + 1000);
    for (const bad of ['yesterday', '2024-02-31T00:00:00Z', '2024-13-01', '2024-01-01T25:00:00Z', '']) {
      const c = await api(t.app, 'POST', `/api/mcp/issues/alpha/${body.id}/log`, {
        token: owner.token,
        body: { message: 'x', ts: bad },
      });
      expect(c.status, bad).toBe(400);
      expect(c.body.error).toBe('invalid_timestamp');
    }
    const web = await api(t.app, 'POST', url(`/${body.id}/log`), {
      token: owner.token,
      body: { message: 'web entry' },
    });
    expect(web.status).toBe(200);
    expect(web.body.activity.map((e: any) => e.message)).toEqual([
      'did a thing',
      'created: Logged',
      'from the future',
      'web entry',
    ]); // ordered by ts
    const logs = await t.db
      .selectFrom('activity_log')
      .selectAll()
      .where('type', '=', 'issue_log')
      .where('project_id', '=', proj.id)
      .execute();
    expect(logs.filter((e) => (e.payload as any).issue_id === body.id)).toHaveLength(3);
    expect(logs.find((e) => e.actor === 'Coder')?.worker_id).toBe(workerId);
    expect(
      (await api(t.app, 'POST', '/api/mcp/issues/alpha/999/log', { token: owner.token, body: { message: 'x' } }))
        .status,
    ).toBe(404);
  });

  it('lists with status and assignee filters, paged, newest first', async () => {
    await t.db.insertInto('projects').values({ owner_id: owner.id, name: 'gamma', display_name: 'g' }).execute();
    const g = (p: string) => `/api/crm/projects/gamma/issues${p}`;
    for (let i = 1; i <= 7; i++) {
      const r = await api(t.app, 'POST', g(''), {
        token: owner.token,
        body: { title: `i${i}`, assignee: i % 2 ? 'ann' : null },
      });
      if (i <= 3) await api(t.app, 'PUT', g(`/${r.body.id}`), { token: owner.token, body: { status: 'blocked' } });
    }
    const blocked = await api(t.app, 'GET', g('?status=blocked'), { token: owner.token });
    expect(blocked.body.total).toBe(3);
    expect(blocked.body.issues.map((i: any) => i.id)).toEqual([3, 2, 1]);
    const two = await api(t.app, 'GET', g('?status=open,blocked&limit=2&offset=2'), { token: owner.token });
    expect(two.body).toMatchObject({ total: 7, limit: 2, offset: 2 });
    expect(two.body.issues.map((i: any) => i.id)).toEqual([5, 4]);
    const ann = await api(t.app, 'GET', g('?assignee=ann'), { token: owner.token });
    expect(ann.body.issues.map((i: any) => i.id)).toEqual([7, 5, 3, 1]);
    const none = await api(t.app, 'GET', g('?assignee=none&status=open'), { token: owner.token });
    expect(none.body.issues.map((i: any) => i.id)).toEqual([6, 4]);
  });

  it('keeps the local issues file current and has the issue indexed', async () => {
    const { body } = await create({ title: 'Filed' });
    await api(t.app, 'PUT', url(`/${body.id}`), { token: owner.token, body: { status: 'closed' } });
    const file = JSON.parse(fs.readFileSync(path.join(proj.dir, '.crm', 'issues.json'), 'utf8'));
    expect(file.project).toBe('alpha');
    expect(file.issues.find((i: any) => i.id === body.id)).toMatchObject({ title: 'Filed', status: 'closed' });
    await waitForIndex(t.deps);
    const indexed = await t.db
      .selectFrom('knowledge_documents')
      .select(['doc_id', 'scope'])
      .where('project_id', '=', proj.id)
      .where('doc_type', '=', 'issue')
      .where('doc_id', '=', String(body.id))
      .executeTakeFirst();
    expect(indexed).toEqual({ doc_id: String(body.id), scope: 'project' });
    const doc = await t.services.issues.loadDocument(proj.id, String(body.id));
    expect(doc).toMatchObject({ title: `#${body.id} Filed`, scope: 'project' });
    expect(await t.services.issues.loadDocument(proj.id, '99999')).toBeNull();
  });
});
