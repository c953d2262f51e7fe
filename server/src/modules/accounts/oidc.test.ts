/**
 * Signing in with the identity provider through the HTTP API, against a real OpenID provider (oidc-provider):
 * the button's configuration, a new account with an invite (and refused without one), the provider's verified
 * e-mail counting as verified, an existing account found by its verified e-mail, linking and unlinking in the
 * settings, a rejected state and a missing flow, and a client secret rotated in the middle of a sign-in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, buildTestApp, createUser, type Res, type TestApp, uniqueEmail } from '../../../test/helpers.ts';
import { startOidcProvider } from '../../../test/standins/oidc.ts';

const CALLBACK = 'http://app.test/api/auth/oidc/callback';
const CLIENT = {
  client_id: 'crm-test-client',
  client_secret: 'first-client-secret-0123456789',
  redirect_uris: [CALLBACK],
};

let t: TestApp;
let idp: Awaited<ReturnType<typeof startOidcProvider>>;
let admin: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  idp = await startOidcProvider([CLIENT]);
  t = await buildTestApp({ env: { IDP_ISSUER_URL: idp.issuer, IDP_NAME: 'Test IdP' } });
  admin = await createUser(t, { role: 'admin' });
});
afterAll(async () => {
  await t?.close();
  await idp?.close();
});

const setSecret = (name: string, value: string) =>
  api(t.app, 'PUT', `/api/crm/platform/settings/${name}`, { token: admin.token, body: { value } });
const cookieOf = (r: Res) => String(r.headers['set-cookie']).split(';')[0];
const html = { accept: 'text/html' };

/** An IdP account signed in at the provider from now on. */
function idpUser(email: string, email_verified = true) {
  const id = `sub-${email}`;
  idp.accounts.set(id, { email, email_verified, name: 'Ida' });
  idp.loginAs(id);
  return id;
}

/** Start at the service, pass the provider, and come back: @returns the callback's answer. */
async function signIn(query = '', headers: Record<string, string> = html) {
  const start = await api(t.app, 'GET', `/api/auth/oidc/start${query}`, { headers });
  expect(start.status).toBe(302);
  const back = await idp.follow(start.headers.location);
  expect(back.startsWith(`${CALLBACK}?`)).toBe(true);
  return api(t.app, 'GET', back.slice('http://app.test'.length), { headers: { ...headers, cookie: cookieOf(start) } });
}
const tokenOf = (r: Res) => /#token=([^&]+)/.exec(r.headers.location)?.[1];
const errorOf = (r: Res) => /#error=([a-z_]+)/.exec(r.headers.location)?.[1];
async function invite() {
  const r = await api(t.app, 'POST', '/api/crm/admin/invites', { token: admin.token, body: { count: 1 } });
  return r.body.codes[0] as string;
}

describe('signing in with the identity provider', () => {
  it('is offered only when the client is configured; unconfigured starts answer 503 (a browser is sent back)', async () => {
    expect((await api(t.app, 'GET', '/api/auth/oidc/config')).body).toEqual({ enabled: false, name: 'Test IdP' });
    const json = await api(t.app, 'GET', '/api/auth/oidc/start');
    expect(json.status).toBe(503);
    expect(json.body.error).toBe('idp_unavailable');
    const browser = await api(t.app, 'GET', '/api/auth/oidc/start', { headers: html });
    expect(browser.status).toBe(302);
    expect(browser.headers.location).toBe('http://app.test/login/callback#error=idp_unavailable');
    await setSecret('IDP_CLIENT_ID', CLIENT.client_id);
    await setSecret('IDP_CLIENT_SECRET', CLIENT.client_secret);
    expect((await api(t.app, 'GET', '/api/auth/oidc/config')).body).toEqual({ enabled: true, name: 'Test IdP' });
  });

  it('starts an authorization code flow with PKCE, state and nonce, kept in a sealed HttpOnly cookie', async () => {
    const r = await api(t.app, 'GET', '/api/auth/oidc/start?redirect=/projects', { headers: html });
    const u = new URL(r.headers.location);
    expect(`${u.origin}${u.pathname}`).toBe(`${idp.issuer}/auth`);
    expect(Object.fromEntries(u.searchParams)).toMatchObject({
      client_id: CLIENT.client_id,
      redirect_uri: CALLBACK,
      response_type: 'code',
      code_challenge_method: 'S256',
      scope: 'openid email profile',
    });
    for (const p of ['state', 'nonce', 'code_challenge']) expect(u.searchParams.get(p)?.length).toBeGreaterThan(20);
    const cookie = String(r.headers['set-cookie']);
    expect(cookie).toMatch(/^crm_oidc_flow=v1\./);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).toContain('Path=/api/auth/oidc');
    expect(cookie).not.toContain(u.searchParams.get('state')!);
  });

  it('registers a new account only with a valid invite; the provider’s verified e-mail counts as verified', async () => {
    const email = uniqueEmail('idp-new');
    idpUser(email);
    const refused = await signIn();
    expect(errorOf(refused)).toBe('invite_required');
    const refusedJson = await signIn('', {});
    expect(refusedJson.status).toBe(403);
    expect(refusedJson.body.error).toBe('invite_required');
    expect(errorOf(await signIn('?invite_code=svc-NOPE-NOPE'))).toBe('invalid_invite');

    const code = await invite();
    const ok = await signIn(`?invite_code=${code}&redirect=/projects/demo`);
    expect(ok.headers.location).toMatch(
      /^http:\/\/app\.test\/login\/callback#token=[^&]+&redirect=%2Fprojects%2Fdemo$/,
    );
    const me = await api(t.app, 'GET', '/api/auth/me', { token: tokenOf(ok) });
    expect(me.body).toMatchObject({ email, email_verified: true, name: 'Ida' });
    const invites = await api(t.app, 'GET', '/api/crm/admin/invites', { token: admin.token });
    expect(JSON.stringify(invites.body)).toContain(code);
    // The invite is used: a second new identity cannot reuse it.
    idpUser(uniqueEmail('idp-other'));
    expect(errorOf(await signIn(`?invite_code=${code}`))).toBe('invalid_invite');
    // The same identity signs in again without an invite; it has no password, so it cannot unlink.
    idp.loginAs(`sub-${email}`);
    const again = await signIn();
    const status = await api(t.app, 'GET', '/api/crm/account/oidc', { token: tokenOf(again) });
    expect(status.body).toMatchObject({ configured: true, linked: true, has_password: false });
    const unlink = await api(t.app, 'DELETE', '/api/crm/account/oidc', { token: tokenOf(again) });
    expect(unlink.status).toBe(409);
    expect(unlink.body.error).toBe('last_sign_in_method');
  });

  it('an unverified e-mail at the provider makes an unverified account that gets the verification e-mail', async () => {
    const email = uniqueEmail('idp-unverified');
    idpUser(email, false);
    const r = await signIn(`?invite_code=${await invite()}`);
    const me = await api(t.app, 'GET', '/api/auth/me', { token: tokenOf(r) });
    expect(me.body).toMatchObject({ email, email_verified: false });
    const mail = (await t.deps.mailer.outbox(20)).items.find((m) => m.to === email);
    expect(mail).toMatchObject({ kind: 'verify_email' });
    expect(mail!.text).toContain('http://app.test/verify-email?token=');
  });

  it('signs in the existing account whose verified e-mail matches, never an unverified one', async () => {
    const user = await createUser(t, { email_verified: true });
    idpUser(user.email);
    const r = await signIn();
    const me = await api(t.app, 'GET', '/api/auth/me', { token: tokenOf(r) });
    expect(me.body.id).toBe(user.id);
    const unverified = await createUser(t, { email_verified: false });
    idpUser(unverified.email);
    expect(errorOf(await signIn())).toBe('account_not_linked');
  });

  it('refuses a callback whose state is not the flow’s, and one without its flow cookie', async () => {
    idpUser(uniqueEmail('idp-state'));
    const start = await api(t.app, 'GET', '/api/auth/oidc/start', { headers: html });
    const back = new URL(await idp.follow(start.headers.location));
    back.searchParams.set('state', 'forged-state-value');
    const forged = await api(t.app, 'GET', `${back.pathname}${back.search}`, { headers: { cookie: cookieOf(start) } });
    expect(forged.status).toBe(400);
    expect(forged.body.error).toBe('invalid_state');
    expect(String(forged.headers['set-cookie'])).toMatch(/crm_oidc_flow=;/);
    const noCookie = await api(t.app, 'GET', `${back.pathname}${back.search}`, { headers: html });
    expect(errorOf(noCookie)).toBe('oidc_flow_expired');
  });

  it('links the provider in the settings, signs in with it, and unlinks it while a password remains', async () => {
    const user = await createUser(t);
    const link = await api(t.app, 'POST', '/api/crm/account/oidc/link', { token: user.token });
    expect(link.status).toBe(200);
    idpUser(uniqueEmail('idp-link'));
    const back = await idp.follow(link.body.authorize_url);
    const done = await api(t.app, 'GET', back.slice('http://app.test'.length), {
      headers: { ...html, cookie: cookieOf(link) },
    });
    expect(done.headers.location).toBe('http://app.test/account?oidc=linked');
    const status = await api(t.app, 'GET', '/api/crm/account/oidc', { token: user.token });
    expect(status.body).toMatchObject({ linked: true, has_password: true });
    expect(status.body.identities[0].issuer).toBe(idp.issuer);
    const r = await signIn();
    expect((await api(t.app, 'GET', '/api/auth/me', { token: tokenOf(r) })).body.id).toBe(user.id);
    // Another account cannot link the same identity.
    const other = await createUser(t);
    const link2 = await api(t.app, 'POST', '/api/crm/account/oidc/link', { token: other.token });
    const back2 = await idp.follow(link2.body.authorize_url);
    const taken = await api(t.app, 'GET', back2.slice('http://app.test'.length), {
      headers: { ...html, cookie: cookieOf(link2) },
    });
    expect(taken.headers.location).toBe('http://app.test/account?oidc_error=identity_in_use');
    expect((await api(t.app, 'DELETE', '/api/crm/account/oidc', { token: user.token })).body).toEqual({ ok: true });
    expect((await api(t.app, 'GET', '/api/crm/account/oidc', { token: user.token })).body.linked).toBe(false);
  });

  it('a flow started before the client secret was rotated answers 400 on its callback and succeeds on retry', async () => {
    const user = await createUser(t);
    idpUser(user.email);
    const start = await api(t.app, 'GET', '/api/auth/oidc/start');
    const back = await idp.follow(start.headers.location);
    // The admin rotates the secret at the provider and in the service.
    const rotated = 'rotated-client-secret-9876543210';
    idp.clients.set(CLIENT.client_id, { ...CLIENT, client_secret: rotated });
    expect((await setSecret('IDP_CLIENT_SECRET', rotated)).status).toBe(200);
    const stale = await api(t.app, 'GET', back.slice('http://app.test'.length), {
      headers: { cookie: cookieOf(start) },
    });
    expect(stale.status).toBe(400);
    expect(stale.body.error).toBe('oidc_flow_stale');
    const retry = await signIn();
    expect((await api(t.app, 'GET', '/api/auth/me', { token: tokenOf(retry) })).body.id).toBe(user.id);
  });
});
