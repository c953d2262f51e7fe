/**
 * Authorization before validation, through the real app: without a token 401, another tenant 403 (an unknown
 * project 404), a user on an admin route 403, an unsigned provider callback 401, whatever the body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, buildTestApp, createProject, createUser, type TestApp } from '../../test/helpers.ts';
import { projectParamOf } from './authorize.ts';

let t: TestApp;
let owner: Awaited<ReturnType<typeof createUser>>;
let other: Awaited<ReturnType<typeof createUser>>;
let project: { name: string };

beforeAll(async () => {
  t = await buildTestApp();
  await t.deps.secrets.set('PAYPROV_MERCHANT_TOKEN', 'merchant-token-authorize-test');
  owner = await createUser(t);
  other = await createUser(t);
  project = await createProject(t, owner.id, 'authz-owned');
});
afterAll(async () => {
  await t?.close();
});

/** A body every route refuses (an unknown field, a wrong type). */
const junk = { zz_unknown_field: ['not', 'valid'], name: 12 };

describe('authorization is decided before the body is read or validated', () => {
  it('the four routes that answered 400 first', async () => {
    // The payment provider's callback: no X-Token, or another one → 401, whatever the body.
    for (const headers of [{}, { 'x-token': 'wrong' }] as Array<Record<string, string>>) {
      const r = await api(t.app, 'POST', '/api/crm/billing/webhook', { body: junk, headers });
      expect([r.status, r.body.error]).toEqual([401, 'invalid_signature']);
    }
    const broken = await api(t.app, 'POST', '/api/crm/billing/webhook', {
      payload: '{"broken json',
      headers: { 'content-type': 'application/json' },
    });
    expect(broken.status).toBe(401);
    // An admin route: a user → 403.
    const phases = await api(t.app, 'POST', '/api/crm/analytics/phases', { token: other.token, body: junk });
    expect([phases.status, phases.body.error]).toEqual([403, 'admin_required']);
    // Another tenant's project → 403; a project nobody has → 404; no token → 401.
    for (const path of ['workers/generate-prompt', 'skill-forks']) {
      const theirs = await api(t.app, 'POST', `/api/crm/projects/${project.name}/${path}`, {
        token: other.token,
        body: junk,
      });
      expect([path, theirs.status, theirs.body.error]).toEqual([path, 403, 'forbidden']);
      const none = await api(t.app, 'POST', `/api/crm/projects/no-such-project/${path}`, {
        token: other.token,
        body: junk,
      });
      expect([path, none.status, none.body.error]).toEqual([path, 404, 'project_not_found']);
      const anon = await api(t.app, 'POST', `/api/crm/projects/${project.name}/${path}`, { body: junk });
      expect([path, anon.status]).toEqual([path, 401]);
      // The owner gets the validation answer.
      const mine = await api(t.app, 'POST', `/api/crm/projects/${project.name}/${path}`, {
        token: owner.token,
        body: junk,
      });
      expect([path, mine.status, mine.body.error]).toEqual([path, 400, 'invalid_request']);
    }
  });

  it('every project-scoped route answers another tenant 403 before looking at its input', async () => {
    const routes = t.app.routeList
      .map((r) => {
        const [method, url] = r.split(' ');
        return { method, url, param: projectParamOf(url) };
      })
      .filter((r) => r.param);
    expect(routes.length).toBeGreaterThan(60);
    for (const r of routes) {
      const url = r.url
        .replace(`:${r.param}`, project.name)
        .replace(/:[A-Za-z_]+/g, 'x')
        .concat('?limit=-5&path=%00');
      const res = await api(t.app, r.method as 'GET', url, {
        token: other.token,
        ...(r.method === 'GET' || r.method === 'DELETE' ? {} : { body: junk }),
      });
      expect([r.method, r.url, res.status]).toEqual([r.method, r.url, 403]);
    }
  });

  it('?token= is read on GET streams and WebSocket upgrades only, never on a POST', async () => {
    const r = await api(t.app, 'POST', `/api/crm/projects/${project.name}/chat?token=${owner.token}`, {
      body: { text: 'hello' },
    });
    expect([r.status, r.body.error]).toEqual([401, 'unauthorized']);
  });

  it('names the project parameter of project-scoped paths only', () => {
    expect(projectParamOf('/api/crm/projects/:name')).toBe('name');
    expect(projectParamOf('/api/crm/projects/:name/skill-forks/:id')).toBe('name');
    expect(projectParamOf('/api/cli/transcript/:project/:mode')).toBe('project');
    expect(projectParamOf('/api/mcp/issues/:project/:id/log')).toBe('project');
    expect(projectParamOf('/api/crm/projects/create')).toBeUndefined();
    expect(projectParamOf('/api/crm/platform/settings/:name')).toBeUndefined();
    expect(projectParamOf('/api/crm/workers')).toBeUndefined();
  });
});
