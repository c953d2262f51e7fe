import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { api, buildTestApp, createProject, createUser, type TestApp } from '../../../test/helpers.ts';

let t: TestApp;
let u: Awaited<ReturnType<typeof createUser>>;
let admin: Awaited<ReturnType<typeof createUser>>;
let mine: Awaited<ReturnType<typeof createProject>>;
let second: Awaited<ReturnType<typeof createProject>>;
let foreign: Awaited<ReturnType<typeof createProject>>;

beforeAll(async () => {
  t = await buildTestApp({ env: { CLI_LINK_POLL_MS: '20', CLI_LINK_TIMEOUT_MS: '1500', TRUST_PROXY: '1' } });
  u = await createUser(t);
  admin = await createUser(t, { role: 'admin' });
  const stranger = await createUser(t);
  mine = await createProject(t, u.id, 'tok-mine');
  second = await createProject(t, u.id, 'tok-second');
  foreign = await createProject(t, stranger.id, 'tok-foreign');
});
afterAll(async () => {
  await t?.close();
});

const create = (token: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  api(t.app, 'POST', '/api/crm/account/tokens', { token, body, headers });

describe('access tokens', () => {
  it('are shown once, stored hashed, listed with prefix, created, last used and expiry', async () => {
    const r = await create(u.token, { name: 'ci', scopes: ['read'], expires_in_days: 30 });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.any(Number),
      name: 'ci',
      token: expect.stringMatching(/^arc_pat_[A-Za-z0-9_-]{43}$/),
      prefix: r.body.token.slice(0, 12),
      scopes: ['read'],
      project: null,
      created_at: expect.any(String),
      expires_at: expect.any(String),
    });
    const days = (Date.parse(r.body.expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    const row = await t.db
      .selectFrom('access_tokens')
      .selectAll()
      .where('id', '=', r.body.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(r.body.token);
    expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);

    expect((await api(t.app, 'GET', '/api/auth/me', { token: r.body.token })).body.id).toBe(u.id);
    const list = await api(t.app, 'GET', '/api/crm/account/tokens', { token: u.token });
    expect(list.status).toBe(200);
    const shown = list.body.tokens.find((x: { id: number }) => x.id === r.body.id);
    expect(shown).toMatchObject({ name: 'ci', kind: 'personal', prefix: r.body.prefix, scopes: ['read'] });
    expect(shown.last_used_at).not.toBeNull();
    expect(JSON.stringify(list.body)).not.toContain(r.body.token);
  });

  it('read answers GET only; write everything else a user may do', async () => {
    const read = (await create(u.token, { name: 'r', scopes: ['read'] })).body.token;
    const write = (await create(u.token, { name: 'w', scopes: ['write'] })).body.token;
    const issues = `/api/crm/projects/${mine.name}/issues`;
    expect((await api(t.app, 'GET', issues, { token: read })).status).toBe(200);
    const refused = await api(t.app, 'POST', issues, { token: read, body: { title: 'x' } });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: 'insufficient_scope', required: 'write' });
    expect((await api(t.app, 'POST', issues, { token: write, body: { title: 'from a script' } })).status).toBe(201);
    expect((await api(t.app, 'GET', issues, { token: write })).status).toBe(200);
    // The caller's access still holds: another user's project stays closed.
    expect((await api(t.app, 'GET', `/api/crm/projects/${foreign.name}/issues`, { token: write })).status).toBe(403);
  });

  it('a project-bound token reaches that project only', async () => {
    const r = await create(u.token, { name: 'one', scopes: ['read', 'write'], project: mine.name });
    expect(r.body.project).toBe(mine.name);
    const tok = r.body.token;
    expect((await api(t.app, 'GET', `/api/crm/projects/${mine.name}/issues`, { token: tok })).status).toBe(200);
    const other = await api(t.app, 'GET', `/api/crm/projects/${second.name}/issues`, { token: tok });
    expect(other.status).toBe(403);
    expect(other.body.error).toBe('token_project');
    expect((await api(t.app, 'GET', '/api/crm/projects', { token: tok })).body.error).toBe('token_project');
    expect((await api(t.app, 'GET', '/api/auth/me', { token: tok })).status).toBe(200);
    // A project the user may not reach cannot be bound.
    expect((await create(u.token, { name: 'x', scopes: ['read'], project: foreign.name })).status).toBe(403);
  });

  it('never changes the password, tokens, export or erasure, nor reaches admin routes', async () => {
    const tok = (await create(u.token, { name: 'all', scopes: ['read', 'write'] })).body.token;
    for (const [method, url, body] of [
      ['POST', '/api/auth/change-password', { current_password: u.password, new_password: 'another long password' }],
      ['GET', '/api/crm/account/tokens', undefined],
      ['POST', '/api/crm/account/tokens', { name: 'more', scopes: ['read'] }],
      ['DELETE', '/api/crm/account/tokens/1', undefined],
      ['GET', '/api/auth/export', undefined],
      ['DELETE', '/api/auth/account', { confirm: 'DELETE MY ACCOUNT' }],
      ['POST', '/api/crm/cli/link/confirm', { code: 'AAAA-BBBB' }],
      ['DELETE', '/api/crm/cli/devices/x', undefined],
    ] as const) {
      const r = await api(t.app, method, url, { token: tok, body });
      expect([url, r.status, r.body.error]).toEqual([url, 403, 'session_required']);
    }
    const adminTok = (await create(admin.token, { name: 'adm', scopes: ['read', 'write', 'admin'] })).body.token;
    expect((await api(t.app, 'GET', '/api/crm/admin/users', { token: adminTok })).body.error).toBe('session_required');
  });

  it('the admin scope: administrators only; without it an admin’s token reaches only their own projects', async () => {
    const refused = await create(u.token, { name: 'adm', scopes: ['admin'] });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('admin_required');
    const plain = (await create(admin.token, { name: 'plain', scopes: ['read'] })).body.token;
    const wide = (await create(admin.token, { name: 'wide', scopes: ['read', 'admin'] })).body.token;
    expect((await api(t.app, 'GET', `/api/crm/projects/${foreign.name}/issues`, { token: plain })).status).toBe(403);
    expect((await api(t.app, 'GET', `/api/crm/projects/${foreign.name}/issues`, { token: wide })).status).toBe(200);
    expect((await api(t.app, 'GET', '/api/auth/me', { token: wide })).body.role).toBe('admin');
  });

  it('revoked and expired tokens answer 401; creation, revocation and first use are audited', async () => {
    const ip = { 'x-forwarded-for': '203.0.113.7' };
    const a = (await create(u.token, { name: 'soon revoked', scopes: ['read'] })).body;
    const b = (await create(u.token, { name: 'soon expired', scopes: ['read'], expires_in_days: 1 })).body;
    expect((await api(t.app, 'GET', '/api/auth/me', { token: a.token, headers: ip })).status).toBe(200);
    const del = await api(t.app, 'DELETE', `/api/crm/account/tokens/${a.id}`, { token: u.token });
    expect(del.body).toEqual({ ok: true });
    expect((await api(t.app, 'DELETE', `/api/crm/account/tokens/${a.id}`, { token: u.token })).status).toBe(404);
    const revoked = await api(t.app, 'GET', '/api/auth/me', { token: a.token });
    expect([revoked.status, revoked.body.error]).toEqual([401, 'token_revoked']);
    await t.db
      .updateTable('access_tokens')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', b.id)
      .execute();
    const expired = await api(t.app, 'GET', '/api/auth/me', { token: b.token });
    expect([expired.status, expired.body.error]).toEqual([401, 'token_expired']);
    const events = await t.db
      .selectFrom('auth_events')
      .select('type')
      .where('user_id', '=', u.id)
      .where('type', 'like', 'token_%')
      .execute();
    const types = events.map((e) => e.type);
    for (const k of ['token_created', 'token_revoked', 'token_auth', 'token_failed']) expect(types).toContain(k);
    // Another user cannot revoke it.
    const c = (await create(u.token, { name: 'kept', scopes: ['read'] })).body;
    expect((await api(t.app, 'DELETE', `/api/crm/account/tokens/${c.id}`, { token: admin.token })).status).toBe(404);
  });

  it('failed attempts are throttled per address', async () => {
    const bad = `arc_pat_${'x'.repeat(43)}`;
    const headers = { 'x-forwarded-for': '198.51.100.9' };
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++)
      statuses.push((await api(t.app, 'GET', '/api/auth/me', { token: bad, headers })).status);
    expect(new Set(statuses)).toEqual(new Set([401]));
    const last = await api(t.app, 'GET', '/api/auth/me', { token: bad, headers });
    expect([last.status, last.body.error]).toEqual([429, 'too_many_attempts']);
    // Another address is not held back.
    const elsewhere = { 'x-forwarded-for': '198.51.100.10' };
    expect((await api(t.app, 'GET', '/api/auth/me', { token: bad, headers: elsewhere })).status).toBe(401);
  });
});

describe('the CLI device credential', () => {
  const stream = (token: string) =>
    t.app.inject({ method: 'GET', url: `/api/sse/cli-status?token=${encodeURIComponent(token)}` });

  /** Run a device link to its end as user `who`. @returns the token the link stream hands out. */
  async function link(who: { token: string }, body?: Record<string, string>) {
    const l = await api(t.app, 'POST', '/api/cli/link', body ? { body } : {});
    expect(l.status).toBe(201);
    const pending = stream(l.body.link_token);
    await new Promise((r) => setTimeout(r, 50));
    await api(t.app, 'POST', '/api/crm/cli/link/confirm', { token: who.token, body: { code: l.body.code } });
    const m = /event: linked\ndata: (.*)\n/.exec((await pending).body);
    return JSON.parse(m![1]).token as string;
  }

  it('keeps arc logged in past 24 hours; revoking the device logs it out at its next call', async () => {
    const dev = await createUser(t);
    const token = await link(dev, { device_id: 'dev-1', hostname: 'laptop' });
    expect(token).toMatch(/^arc_dev_/);
    const beat = await api(t.app, 'POST', '/api/cli/heartbeat', {
      token,
      headers: { 'x-arc-version': '1.0.16' },
      body: { device_id: 'dev-1', hostname: 'laptop', platform: 'linux', version: '1.0.16' },
    });
    expect(beat.status).toBe(200);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 25 * 3600_000);
      // The 24-hour session token has expired; the device credential has not.
      expect((await api(t.app, 'GET', '/api/auth/me', { token: dev.token })).status).toBe(401);
      expect((await api(t.app, 'GET', '/api/auth/me', { token })).status).toBe(200);
    } finally {
      vi.useRealTimers();
    }
    const devices = await api(t.app, 'GET', '/api/crm/cli/devices', { token: dev.token });
    expect(devices.body.devices[0]).toMatchObject({
      device_id: 'dev-1',
      credential: { id: expect.any(Number), prefix: token.slice(0, 12) },
    });
    const tokens = (await api(t.app, 'GET', '/api/crm/account/tokens', { token: dev.token })).body.tokens;
    expect(tokens).toEqual([expect.objectContaining({ kind: 'device', name: 'arc on laptop', device_id: 'dev-1' })]);
    // A new link of the same device replaces its credential.
    const again = await link(dev, { device_id: 'dev-1', hostname: 'laptop' });
    expect((await api(t.app, 'GET', '/api/auth/me', { token })).body.error).toBe('token_revoked');
    const del = await api(t.app, 'DELETE', '/api/crm/cli/devices/dev-1', { token: dev.token });
    expect(del.body).toEqual({ ok: true, revoked: 1 });
    const out = await api(t.app, 'GET', '/api/auth/me', { token: again });
    expect([out.status, out.body.error]).toEqual([401, 'token_revoked']);
    expect((await api(t.app, 'DELETE', '/api/crm/cli/devices/dev-1', { token: dev.token })).status).toBe(404);
  });

  it('an older CLI (no body) still links', async () => {
    const dev = await createUser(t);
    const token = await link(dev);
    expect((await api(t.app, 'GET', '/api/auth/me', { token })).body.id).toBe(dev.id);
  });
});
