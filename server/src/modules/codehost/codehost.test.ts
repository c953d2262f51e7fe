/**
 * Connecting the code host through the HTTP API, against the code host stand-in (GitHub's OAuth shape and a git
 * server over smart HTTP): the OAuth flow with PKCE and its refusals (state, a rotation mid-flow), the token kept
 * sealed, a private repository cloned with it (and not without it), `codehost_authed`, and disconnecting, which
 * revokes the token at the code host.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, buildTestApp, createProject, createUser, type Res, type TestApp } from '../../../test/helpers.ts';
import { startCodehostStandIn } from '../../../test/standins/codehost.ts';

let t: TestApp;
let host: Awaited<ReturnType<typeof startCodehostStandIn>>;
let admin: Awaited<ReturnType<typeof createUser>>;
let user: Awaited<ReturnType<typeof createUser>>;
let project: Awaited<ReturnType<typeof createProject>>;
let repoUrl: string;

beforeAll(async () => {
  host = await startCodehostStandIn({ id: 'Iv1.codehost-app', secret: 'codehost-secret-0123456789' });
  repoUrl = host.createRepo('octo', 'private-repo', { 'README.md': 'private hello\n' });
  t = await buildTestApp({
    env: { CODEHOST_OAUTH_URL: host.url, CODEHOST_API_URL: host.apiUrl, OUTBOUND_ALLOW_PRIVATE: '127.0.0.1' },
  });
  admin = await createUser(t, { role: 'admin' });
  user = await createUser(t);
  project = await createProject(t, user.id, 'codehost-clone');
});
afterAll(async () => {
  await t?.close();
  await host?.close();
});

const setSecret = (name: string, value: string) =>
  api(t.app, 'PUT', `/api/crm/platform/settings/${name}`, { token: admin.token, body: { value } });
const cookieOf = (r: Res) => String(r.headers['set-cookie']).split(';')[0];
const clone = (dir: string) =>
  api(t.app, 'POST', `/api/crm/projects/${project.name}/files/clone`, {
    token: user.token,
    body: { url: repoUrl, dir },
  });
/** Connect: the code host approves at once and sends the browser back. @returns the callback's answer. */
async function connect(query?: (q: URLSearchParams) => void, before?: () => Promise<void>) {
  const r = await api(t.app, 'POST', '/api/crm/account/codehost/connect', { token: user.token });
  expect(r.status).toBe(200);
  const res = await fetch(r.body.authorize_url, { redirect: 'manual' });
  const back = new URL(res.headers.get('location')!);
  query?.(back.searchParams);
  await before?.();
  return api(t.app, 'GET', `${back.pathname}${back.search}`, { headers: { cookie: cookieOf(r) } });
}

describe('connecting the code host', () => {
  it('answers 503 until the code host app is configured', async () => {
    const r = await api(t.app, 'POST', '/api/crm/account/codehost/connect', { token: user.token });
    expect(r.status).toBe(503);
    expect(r.body.error).toBe('codehost_unavailable');
    await setSecret('CODEHOST_CLIENT_ID', host.client.id);
    await setSecret('CODEHOST_CLIENT_SECRET', host.client.secret);
    const s = await api(t.app, 'GET', '/api/crm/account/codehost', { token: user.token });
    expect(s.body).toMatchObject({ configured: true, connected: false, login: null });
  });

  it('cannot clone the private repository before connecting', async () => {
    const r = await clone('before');
    expect(r.status).toBe(502);
    expect(r.body.error).toBe('clone_failed');
    expect(host.gitRequests.at(-1)).toMatchObject({ authorized: false });
  });

  it('refuses a forged state, and a flow started before the app secret was rotated (the next one succeeds)', async () => {
    const forged = await connect((q) => q.set('state', 'forged'));
    expect(forged.status).toBe(400);
    expect(forged.body.error).toBe('invalid_state');
    const stale = await connect(undefined, async () => {
      host.client.secret = 'rotated-codehost-secret-9876';
      await setSecret('CODEHOST_CLIENT_SECRET', host.client.secret);
    });
    expect(stale.status).toBe(400);
    expect(stale.body.error).toBe('codehost_flow_stale');
    expect(host.tokens.size).toBe(0);
  });

  it('connects with PKCE, keeps the token sealed, and clones the private repository with it', async () => {
    const r = await api(t.app, 'POST', '/api/crm/account/codehost/connect', { token: user.token });
    const u = new URL(r.body.authorize_url);
    expect(`${u.origin}${u.pathname}`).toBe(`${host.url}/login/oauth/authorize`);
    expect(Object.fromEntries(u.searchParams)).toMatchObject({
      client_id: host.client.id,
      redirect_uri: 'http://app.test/api/crm/account/codehost/callback',
      scope: 'repo read:user',
      code_challenge_method: 'S256',
    });
    const done = await connect();
    expect(done.status).toBe(302);
    expect(done.headers.location).toBe('http://app.test/account?codehost=connected');
    const [token] = [...host.tokens];
    const row = await t.db.selectFrom('codehost_links').selectAll().where('user_id', '=', user.id).executeTakeFirst();
    expect(row).toMatchObject({ login: 'octo', codehost_user_id: '4242' });
    expect(row!.token_enc).not.toContain(token);
    const s = await api(t.app, 'GET', '/api/crm/account/codehost', { token: user.token });
    expect(s.body).toMatchObject({ connected: true, login: 'octo' });
    expect(JSON.stringify(s.body)).not.toContain(token);

    const c = await clone('private');
    expect(c.status).toBe(201);
    expect(fs.readFileSync(path.join(project.dir, 'private', 'README.md'), 'utf8')).toBe('private hello\n');
    expect(host.gitRequests.at(-1)).toMatchObject({ authorized: true });
    // The token is in neither the clone's configuration nor its remote address.
    expect(fs.readFileSync(path.join(project.dir, 'private', '.git', 'config'), 'utf8')).not.toContain(token);
    // Another host never gets it.
    expect(await t.services.codehost.cloneCredential(user.id, new URL('https://elsewhere.example/a/b.git'))).toBe(
      undefined,
    );
  });

  it('reports codehost_authed for the cloud container while connected', async () => {
    await t.db
      .insertInto('cloud_containers')
      .values({ user_id: user.id, container_id: '', runtime: 'none', status: 'deleted' })
      .execute();
    const s = await api(t.app, 'GET', '/api/crm/cloud/status', { token: user.token });
    expect(s.body.codehost_authed).toBe(true);
  });

  it('disconnects: the token is revoked at the code host and the repository no longer clones', async () => {
    const [token] = [...host.tokens];
    const d = await api(t.app, 'DELETE', '/api/crm/account/codehost', { token: user.token });
    expect(d.body).toEqual({ ok: true, revoked: true });
    expect(host.revoked).toContain(token);
    expect((await api(t.app, 'GET', '/api/crm/account/codehost', { token: user.token })).body.connected).toBe(false);
    expect((await clone('after')).status).toBe(502);
    expect((await api(t.app, 'GET', '/api/crm/cloud/status', { token: user.token })).body.codehost_authed).toBe(false);
    expect((await api(t.app, 'DELETE', '/api/crm/account/codehost', { token: user.token })).status).toBe(404);
  });
});
