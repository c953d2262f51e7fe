/**
 * Platform settings through the HTTP API: the allow-list, previews, rotation with its audit in one transaction,
 * vendor tests against the LLM and messenger stand-ins, restart, the append-only audit (refused by the database),
 * and a rotation seen by the next LLM call on another instance (PostgreSQL only).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from 'kysely';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { api, buildTestApp, buildTestCluster, createUser, type TestApp } from '../../../test/helpers.ts';
import { startLlmStandIn } from '../../../test/standins/llm.ts';
import { startMessengerStandIn } from '../../../test/standins/messenger.ts';

let t: TestApp;
let llm: Awaited<ReturnType<typeof startLlmStandIn>>;
let messenger: Awaited<ReturnType<typeof startMessengerStandIn>>;
let vendor: Server;
let vendorUrl: string;
let admin: Awaited<ReturnType<typeof createUser>>;
let user: Awaited<ReturnType<typeof createUser>>;

const LLM_KEY = 'sk-ant-api03-rotated-platform-key-0123456789';
const BOT_TOKEN = '123456:operator-bot-token-abcdef';
const CLIENT_ID = 'Iv1.known-client-id';
const EMAIL_KEY = 're_known_email_api_key';

/**
 * A stand-in of the OAuth authorization pages (code host `/login/oauth/authorize`: 200 for CLIENT_ID, else 404;
 * identity provider: its discovery document names `/o/oauth2/v2/auth`, which redirects CLIENT_ID with the service's
 * callback to sign in, else 401) and of the e-mail API (`POST /emails`: 422 for an empty message with
 * `Bearer EMAIL_KEY`, else 403).
 */
function startVendorStandIn(): Promise<Server> {
  const server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/.well-known/openid-configuration') {
      const root = `http://${req.headers.host}`;
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ issuer: root, authorization_endpoint: `${root}/o/oauth2/v2/auth` }));
    }
    const known =
      u.searchParams.get('client_id') === CLIENT_ID &&
      (u.pathname !== '/o/oauth2/v2/auth' ||
        u.searchParams.get('redirect_uri') === 'http://app.test/api/auth/oidc/callback');
    const status =
      u.pathname === '/login/oauth/authorize'
        ? known
          ? 200
          : 404
        : u.pathname === '/o/oauth2/v2/auth'
          ? known
            ? 302
            : 401
          : u.pathname === '/emails' && req.method === 'POST'
            ? req.headers.authorization === `Bearer ${EMAIL_KEY}`
              ? 422
              : 403
            : 404;
    res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

beforeAll(async () => {
  llm = await startLlmStandIn();
  messenger = await startMessengerStandIn({ [BOT_TOKEN]: { id: 123456, username: 'crm_operator_bot' } });
  vendor = await startVendorStandIn();
  vendorUrl = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`;
  t = await buildTestApp({
    env: {
      LLM_PROVIDER: 'anthropic',
      LLM_BASE_URL: llm.anthropicUrl,
      MESSENGER_API_URL: messenger.url,
      CODEHOST_OAUTH_URL: vendorUrl,
      IDP_ISSUER_URL: vendorUrl,
      EMAIL_API_URL: vendorUrl,
    },
  });
  admin = await createUser(t, { role: 'admin' });
  user = await createUser(t);
});
afterAll(async () => {
  await t?.close();
  await llm?.close();
  await messenger?.close();
  await new Promise((r) => vendor?.close(r));
});

/** The key the last model call carried (`x-api-key`, or a bearer token). */
const lastKey = () => {
  const h = llm.modelCalls().at(-1)!.headers;
  return String(h['x-api-key'] ?? h.authorization).replace(/^Bearer /, '');
};

const put = (name: string, value: string, token = admin.token) =>
  api(t.app, 'PUT', `/api/crm/platform/settings/${name}`, {
    token,
    body: { value },
    headers: { 'user-agent': 'settings-test/1.0' },
  });

describe('platform settings', () => {
  it('lists the seven allowed settings with every field and no value', async () => {
    await t.deps.secrets.set('EMAIL_API_KEY', 're_abcdefghijklmnopqrstuvwxyz', 'environment');
    const r = await api(t.app, 'GET', '/api/crm/platform/settings', { token: admin.token });
    expect(r.status).toBe(200);
    expect(r.body.items.map((i: any) => i.name)).toEqual([
      'PLATFORM_LLM_KEY',
      'CODEHOST_CLIENT_ID',
      'CODEHOST_CLIENT_SECRET',
      'IDP_CLIENT_ID',
      'IDP_CLIENT_SECRET',
      'MASTER_BOT_TOKEN',
      'EMAIL_API_KEY',
    ]);
    const email = r.body.items.find((i: any) => i.name === 'EMAIL_API_KEY');
    expect(email).toMatchObject({
      set: true,
      preview: 're_abcdef…wxyz',
      length: 29,
      lastRotatedBy: 'environment',
      category: 'email',
      restartTargets: [],
      testable: true,
    });
    for (const k of ['label', 'description', 'usedIn', 'getFromUrl', 'effectAfterRotate', 'riskIfLeaked'])
      expect(email[k]).toBeTruthy();
    expect(r.text).not.toContain('re_abcdefghijklmnopqrstuvwxyz');
    expect(r.body.items.find((i: any) => i.name === 'PLATFORM_LLM_KEY')).toMatchObject({
      set: false,
      preview: null,
      length: 0,
      category: 'llm',
      testable: true,
    });
    expect((await api(t.app, 'GET', '/api/crm/platform/settings', { token: user.token })).status).toBe(403);
    expect((await api(t.app, 'GET', '/api/crm/platform/settings')).status).toBe(401);
  });

  it('rotates a secret with an audit entry; refuses other names, short values and non-admins', async () => {
    const r = await put('PLATFORM_LLM_KEY', LLM_KEY);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      name: 'PLATFORM_LLM_KEY',
      set: true,
      length: LLM_KEY.length,
      lastRotatedBy: admin.email,
    });
    expect(r.body.preview).toBe(`${LLM_KEY.slice(0, 12)}…${LLM_KEY.slice(-4)}`);
    expect(r.text).not.toContain(LLM_KEY);
    expect(await t.deps.secrets.get('PLATFORM_LLM_KEY')).toBe(LLM_KEY);
    for (const name of ['CRM_SECRET', 'SECRET_ENCRYPTION_KEY', 'PAYPROV_MERCHANT_TOKEN', 'PATH']) {
      const bad = await put(name, 'long-enough-value');
      expect(bad.status).toBe(400);
      expect(['not_managed', 'unknown_setting']).toContain(bad.body.error);
      expect(bad.text).not.toContain('long-enough-value');
    }
    expect((await put('CRM_SECRET', 'long-enough-value')).body.error).toBe('not_managed');
    const short = await put('EMAIL_API_KEY', 'short');
    expect(short.status).toBe(400);
    expect((await put('EMAIL_API_KEY', 'long-enough-value', user.token)).status).toBe(403);
    const audit = await api(t.app, 'GET', '/api/crm/platform/audit?key=PLATFORM_LLM_KEY', { token: admin.token });
    expect(audit.status).toBe(200);
    expect(audit.body.items[0]).toMatchObject({
      key_name: 'PLATFORM_LLM_KEY',
      action: 'set',
      actor_email: admin.email,
      user_agent: 'settings-test/1.0',
      client_ip: '127.0.0.1',
    });
    expect(audit.text).not.toContain(LLM_KEY);
    const all = await api(t.app, 'GET', '/api/crm/platform/audit', { token: admin.token });
    expect(all.body.items.some((i: any) => i.key_name === 'CRM_SECRET')).toBe(false);
  });

  it('the audit is append-only in the database', async () => {
    await put('IDP_CLIENT_ID', 'client-id-0123456789');
    await expect(sql`update platform_audit set actor_email = 'someone@else'`.execute(t.db)).rejects.toThrow(
      /append-only/,
    );
    await expect(sql`delete from platform_audit`.execute(t.db)).rejects.toThrow(/append-only/);
    await expect(sql`truncate platform_audit`.execute(t.db)).rejects.toThrow(/append-only/);
    const n = await sql<{ n: number }>`select count(*)::int as n from platform_audit`.execute(t.db);
    expect(n.rows[0].n).toBeGreaterThan(0);
  });

  it('tests the LLM key and the bot token against their vendors; an OAuth client secret gives 501', async () => {
    await put('PLATFORM_LLM_KEY', LLM_KEY);
    llm.enqueue({ content: [{ type: 'text', text: 'p' }], usage: { input_tokens: 5, output_tokens: 1 } });
    const ok = await api(t.app, 'POST', '/api/crm/platform/settings/PLATFORM_LLM_KEY/test', { token: admin.token });
    expect(ok.status).toBe(200);
    expect(ok.body.ok).toBe(true);
    expect(lastKey()).toBe(LLM_KEY);
    llm.enqueue({ status: 401, errorType: 'authentication_error' });
    const bad = await api(t.app, 'POST', '/api/crm/platform/settings/PLATFORM_LLM_KEY/test', { token: admin.token });
    expect(bad.body).toMatchObject({ ok: false, reason: 'rejected' });

    const unset = await api(t.app, 'POST', '/api/crm/platform/settings/MASTER_BOT_TOKEN/test', { token: admin.token });
    expect(unset.body).toMatchObject({ ok: false, reason: 'not_set' });
    await put('MASTER_BOT_TOKEN', BOT_TOKEN);
    const bot = await api(t.app, 'POST', '/api/crm/platform/settings/MASTER_BOT_TOKEN/test', { token: admin.token });
    expect(bot.body).toMatchObject({ ok: true });
    expect(bot.body.detail).toContain('crm_operator_bot');
    await put('MASTER_BOT_TOKEN', '999:not-a-known-bot');
    const refused = await api(t.app, 'POST', '/api/crm/platform/settings/MASTER_BOT_TOKEN/test', {
      token: admin.token,
    });
    expect(refused.body).toMatchObject({ ok: false, reason: 'rejected' });
    expect(refused.text).not.toContain('not-a-known-bot');

    const oauth = await api(t.app, 'POST', '/api/crm/platform/settings/CODEHOST_CLIENT_SECRET/test', {
      token: admin.token,
    });
    expect(oauth.status).toBe(501);
    expect(oauth.body.error).toBe('not_testable');
    const tests = await api(t.app, 'GET', '/api/crm/platform/audit?key=MASTER_BOT_TOKEN&limit=500', {
      token: admin.token,
    });
    expect(tests.body.items.filter((i: any) => i.action === 'test').map((i: any) => i.ok)).toEqual([
      false,
      true,
      false,
    ]);
  });

  it('only the OAuth client secrets give 501: client ids and the e-mail key are tested against their vendors', async () => {
    const test = (name: string) =>
      api(t.app, 'POST', `/api/crm/platform/settings/${name}/test`, { token: admin.token });
    for (const name of ['CODEHOST_CLIENT_SECRET', 'IDP_CLIENT_SECRET']) {
      await put(name, 'some-oauth-client-secret');
      expect((await test(name)).status).toBe(501);
    }
    const list = await api(t.app, 'GET', '/api/crm/platform/settings', { token: admin.token });
    const testable = Object.fromEntries(list.body.items.map((i: any) => [i.name, i.testable]));
    expect(testable).toMatchObject({
      CODEHOST_CLIENT_ID: true,
      IDP_CLIENT_ID: true,
      EMAIL_API_KEY: true,
      CODEHOST_CLIENT_SECRET: false,
      IDP_CLIENT_SECRET: false,
    });
    for (const name of ['CODEHOST_CLIENT_ID', 'IDP_CLIENT_ID']) {
      await put(name, CLIENT_ID);
      const ok = await test(name);
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({ ok: true });
      await put(name, 'unknown-client-id');
      const bad = await test(name);
      expect(bad.status).toBe(200);
      expect(bad.body).toMatchObject({ ok: false, reason: 'rejected' });
      expect(bad.text).not.toContain('unknown-client-id');
    }
    await put('EMAIL_API_KEY', EMAIL_KEY);
    expect((await test('EMAIL_API_KEY')).body).toMatchObject({ ok: true });
    await put('EMAIL_API_KEY', 're_revoked_email_key');
    const refused = await test('EMAIL_API_KEY');
    expect(refused.body).toMatchObject({ ok: false, reason: 'rejected' });
    expect(refused.text).not.toContain('re_revoked');
  });

  it('restart answers what it restarted and a note, audited', async () => {
    const r = await api(t.app, 'POST', '/api/crm/platform/settings/MASTER_BOT_TOKEN/restart', { token: admin.token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ok: true, restarted: [] });
    expect(r.body.note).toBeTruthy();
    const a = await api(t.app, 'GET', '/api/crm/platform/audit?limit=1', { token: admin.token });
    expect(a.body).toMatchObject({ count: 1, items: [{ key_name: 'MASTER_BOT_TOKEN', action: 'restart' }] });
    expect((await api(t.app, 'GET', '/api/crm/platform/audit?limit=501', { token: admin.token })).status).toBe(400);
  });
});

describe.skipIf(inject('dbKind') !== 'postgres')('a rotation on another instance', () => {
  it('the next LLM call on instance B uses the key rotated on instance A', async () => {
    const cluster = await buildTestCluster(2, {
      env: { LLM_PROVIDER: 'anthropic', LLM_BASE_URL: llm.anthropicUrl },
    });
    try {
      const [a, b] = cluster.instances;
      const adm = await createUser(a, { role: 'admin' });
      const call = async (inst: typeof a) => {
        llm.enqueue({ content: [{ type: 'text', text: 'p' }] });
        const r = await fetch(`${inst.url}/api/crm/platform/settings/PLATFORM_LLM_KEY/test`, {
          method: 'POST',
          headers: { authorization: `Bearer ${adm.token}` },
        });
        expect(r.status).toBe(200);
        return lastKey();
      };
      for (const [i, key] of ['sk-ant-first-key-0123456789', 'sk-ant-second-key-0123456789'].entries()) {
        const r = await fetch(`${a.url}/api/crm/platform/settings/PLATFORM_LLM_KEY`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${adm.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ value: key }),
        });
        expect(r.status).toBe(200);
        expect(await call(b)).toBe(key);
        if (i === 0) expect(await call(a)).toBe(key);
      }
    } finally {
      await cluster.close();
    }
  });
});
