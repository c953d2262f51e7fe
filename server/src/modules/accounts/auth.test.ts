import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { SignJWT } from 'jose';
import { api, buildTestApp, createUser, TEST_KEYS, uniqueEmail, type TestApp } from '../../../test/helpers.ts';
import { startSmtpStandIn } from '../../../test/standins/smtp.ts';
import { startRangeApiStandIn } from '../../../test/standins/range-api.ts';
import { createBreachChecker } from '../../providers/breach/breach.ts';

const BREACHED = 'password123456';
let t: TestApp;
let smtp: Awaited<ReturnType<typeof startSmtpStandIn>>;
let range: Awaited<ReturnType<typeof startRangeApiStandIn>>;
let admin: Awaited<ReturnType<typeof createUser>>;
let ipSeq = 0;
const freshIp = () => `10.9.${Math.floor(++ipSeq / 250)}.${ipSeq % 250}`;

async function invite(): Promise<string> {
  const res = await api(t.app, 'POST', '/api/crm/admin/invites', { token: admin.token, body: { count: 1 } });
  expect(res.status).toBe(200);
  return res.body.codes[0];
}

async function register(body: Record<string, unknown>, ip = freshIp()) {
  return api(t.app, 'POST', '/api/auth/register', { body, headers: { 'x-forwarded-for': ip } });
}

const lastMailTo = (email: string) => [...smtp.messages].reverse().find((m) => m.to.includes(email));
const linkToken = (text: string, p: string) => new RegExp(`${p}\\?token=([A-Za-z0-9_-]+)`).exec(text)?.[1];

beforeAll(async () => {
  smtp = await startSmtpStandIn();
  range = await startRangeApiStandIn([BREACHED]);
  t = await buildTestApp({ env: { SMTP_URL: smtp.url, BREACH_CHECK_URL: range.url, TRUST_PROXY: '1' } });
  admin = await createUser(t, { role: 'admin' });
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
  await range?.close();
});

describe('registration with an invite code', () => {
  it('403 invite_required without a code, 403 invalid_invite for an unknown one', async () => {
    const a = await register({ email: uniqueEmail(), password: 'a fine passphrase' });
    expect(a.status).toBe(403);
    expect(a.body.error).toBe('invite_required');
    expect(typeof a.body.message).toBe('string');
    const b = await register({ email: uniqueEmail(), password: 'a fine passphrase', invite_code: 'svc-AAAA-BBBB' });
    expect(b.status).toBe(403);
    expect(b.body.error).toBe('invalid_invite');
    const c = await register({ email: uniqueEmail(), password: 'a fine passphrase', invite_code: 'not-a-code' });
    expect(c.body.error).toBe('invalid_invite');
  });

  it('registers with a code (any letter case), returns a token and needs_verification; the code is then used up', async () => {
    const code = await invite();
    expect(code).toMatch(/^svc-[A-Z0-9]{4}-[A-Z0-9]{4}$/);
    const email = uniqueEmail('new');
    const res = await register({
      email: email.toUpperCase(),
      password: 'a fine passphrase',
      invite_code: code.toLowerCase(),
      name: 'Ann',
    });
    expect(res.status).toBe(201);
    expect(res.body.needs_verification).toBe(true);
    expect(res.body.user).toMatchObject({ email, name: 'Ann', role: 'user', plan: 'free', email_verified: false });
    expect(res.body.user.chat_id).toBe(String(res.body.user.id));
    const me = await api(t.app, 'GET', '/api/auth/me', { token: res.body.token });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: res.body.user.id, email, role: 'user', email_verified: false });
    expect(Object.keys(me.body).sort()).toEqual([
      'chat_id',
      'created_at',
      'email',
      'email_verified',
      'id',
      'name',
      'plan',
      'role',
    ]);
    const again = await register({ email: uniqueEmail(), password: 'a fine passphrase', invite_code: code });
    expect(again.status).toBe(403);
    expect(again.body.error).toBe('invalid_invite');
    const list = await api(t.app, 'GET', '/api/crm/admin/invites', { token: admin.token });
    const row = list.body.invites.find((i: any) => i.code === code);
    expect(row).toMatchObject({ status: 'used', used_by_email: email });
  });

  it('an e-mail already registered gives 409 and leaves the code unused', async () => {
    const code = await invite();
    const res = await register({ email: admin.email, password: 'a fine passphrase', invite_code: code });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('email_taken');
    const ok = await register({ email: uniqueEmail(), password: 'a fine passphrase', invite_code: code });
    expect(ok.status).toBe(201);
  });

  it('two registrations racing for one code: exactly one wins', async () => {
    const code = await invite();
    const [a, b] = await Promise.all([
      register({ email: uniqueEmail(), password: 'a fine passphrase', invite_code: code }),
      register({ email: uniqueEmail(), password: 'a fine passphrase', invite_code: code }),
    ]);
    expect([a.status, b.status].sort()).toEqual([201, 403]);
  });

  it('allows 3 signups per client address per 24 h, then 429; other addresses are unaffected', async () => {
    const ip = '203.0.113.77';
    for (let i = 0; i < 3; i++) {
      const r = await register(
        { email: uniqueEmail(), password: 'a fine passphrase', invite_code: await invite() },
        ip,
      );
      expect(r.status).toBe(201);
    }
    const code = await invite();
    const blocked = await register({ email: uniqueEmail(), password: 'a fine passphrase', invite_code: code }, ip);
    expect(blocked.status).toBe(429);
    expect(blocked.body.error).toBe('signup_limit');
    const other = await register(
      { email: uniqueEmail(), password: 'a fine passphrase', invite_code: code },
      '203.0.113.78',
    );
    expect(other.status).toBe(201);
  });

  it('signups older than 24 h do not count', async () => {
    const ip = '203.0.113.90';
    for (let i = 0; i < 3; i++)
      await t.db
        .insertInto('signups')
        .values({ ip, user_id: null, created_at: new Date(Date.now() - 25 * 3600_000) })
        .execute();
    const r = await register({ email: uniqueEmail(), password: 'a fine passphrase', invite_code: await invite() }, ip);
    expect(r.status).toBe(201);
  });

  it('rejects weak and breached passwords with 400 and sends only a 5-character prefix to the range API', async () => {
    const code = await invite();
    const weak = await register({ email: uniqueEmail(), password: 'short', invite_code: code });
    expect(weak.status).toBe(400);
    expect(weak.body.error).toBe('weak_password');
    range.requests.length = 0;
    const breached = await register({ email: uniqueEmail(), password: BREACHED, invite_code: code });
    expect(breached.status).toBe(400);
    expect(breached.body.error).toBe('breached_password');
    const sha = crypto.createHash('sha1').update(BREACHED).digest('hex').toUpperCase();
    expect(range.requests).toEqual([`/range/${sha.slice(0, 5)}`]);
    expect(range.requests.join('')).not.toContain(sha.slice(5, 12));
    const ok = await register({ email: uniqueEmail(), password: 'a fine passphrase', invite_code: code });
    expect(ok.status).toBe(201);
  });
});

describe('breach check availability', () => {
  it('passes when the range API is slower than the timeout or answers an error', async () => {
    const slow = await startRangeApiStandIn([BREACHED], { delayMs: 1500 });
    const broken = await startRangeApiStandIn([BREACHED], { status: 503 });
    try {
      const started = Date.now();
      expect(await createBreachChecker(slow.url, { timeoutMs: 200 }).isBreached(BREACHED)).toBe(false);
      expect(Date.now() - started).toBeLessThan(1200);
      expect(await createBreachChecker(broken.url).isBreached(BREACHED)).toBe(false);
      expect(await createBreachChecker('http://127.0.0.1:9').isBreached(BREACHED)).toBe(false);
      expect(await createBreachChecker(range.url).isBreached(BREACHED)).toBe(true);
      expect(await createBreachChecker(undefined).isBreached(BREACHED)).toBe(false);
    } finally {
      await slow.close();
      await broken.close();
    }
  });
});

describe('login and tokens', () => {
  it('logs in (also unverified, with needs_verification) and refuses wrong credentials with 401', async () => {
    const u = await createUser(t, { email_verified: false });
    const ok = await api(t.app, 'POST', '/api/auth/login', { body: { email: u.email, password: u.password } });
    expect(ok.status).toBe(200);
    expect(ok.body.needs_verification).toBe(true);
    const wrong = await api(t.app, 'POST', '/api/auth/login', {
      body: { email: u.email, password: 'not the password' },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe('invalid_credentials');
    const unknown = await api(t.app, 'POST', '/api/auth/login', {
      body: { email: uniqueEmail(), password: 'whatever123' },
    });
    expect(unknown.status).toBe(401);
    expect(unknown.body.error).toBe('invalid_credentials');
  });

  it('issues an HS256 token with sub, role, pv, chat_id and a 24 h lifetime', async () => {
    const u = await createUser(t);
    const res = await api(t.app, 'POST', '/api/auth/login', { body: { email: u.email, password: u.password } });
    const [h, p] = res.body.token
      .split('.')
      .slice(0, 2)
      .map((s: string) => JSON.parse(Buffer.from(s, 'base64url').toString()));
    expect(h.alg).toBe('HS256');
    expect(p).toMatchObject({ sub: String(u.id), role: 'user', pv: 0, chat_id: String(u.id) });
    expect(p.exp - p.iat).toBe(24 * 3600);
  });

  it('401 for missing, garbage, forged, expired and alg:none tokens', async () => {
    const u = await createUser(t);
    const key = new TextEncoder().encode(TEST_KEYS.crmSecret);
    const forged = await new SignJWT({ role: 'admin', pv: 0, chat_id: String(u.id) })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(String(u.id))
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('another secret entirely 123456'));
    const expired = await new SignJWT({ role: 'user', pv: 0, chat_id: String(u.id) })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(String(u.id))
      .setIssuedAt(Math.floor(Date.now() / 1000) - 90000)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
      .sign(key);
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify({ sub: String(u.id), role: 'admin', pv: 0, exp: Math.floor(Date.now() / 1000) + 3600 })).toString('base64url')}.`;
    const hs512 = await new SignJWT({ role: 'user', pv: 0 })
      .setProtectedHeader({ alg: 'HS512' })
      .setSubject(String(u.id))
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(TEST_KEYS.crmSecret.padEnd(64, 'x')));
    const cases: Array<[string | undefined, string]> = [
      [undefined, 'unauthorized'],
      ['garbage', 'invalid_token'],
      [forged, 'invalid_token'],
      [expired, 'token_expired'],
      [none, 'invalid_token'],
      [hs512, 'invalid_token'],
    ];
    for (const [token, code] of cases) {
      const res = await api(t.app, 'GET', '/api/auth/me', { token });
      expect(res.status, String(token)).toBe(401);
      expect(res.body.error).toBe(code);
    }
    const basic = await api(t.app, 'GET', '/api/auth/me', { headers: { authorization: 'Basic dXNlcjpwYXNz' } });
    expect(basic.status).toBe(401);
  });

  it('a token of a deleted account is refused', async () => {
    const u = await createUser(t);
    await t.db.deleteFrom('users').where('id', '=', u.id).execute();
    const res = await api(t.app, 'GET', '/api/auth/me', { token: u.token });
    expect(res.status).toBe(401);
  });

  it('the role comes from the stored account, not from the token', async () => {
    const u = await createUser(t);
    const claimsAdmin = await t.deps.tokens.sign({ sub: u.id, role: 'admin', pv: 0, chat_id: String(u.id) });
    const res = await api(t.app, 'GET', '/api/crm/admin/invites', { token: claimsAdmin });
    expect(res.status).toBe(403);
  });
});

describe('e-mail verification', () => {
  it('sends a link with List-Unsubscribe headers and a footer; the link verifies once', async () => {
    const email = uniqueEmail('verify');
    const reg = await register({ email, password: 'a fine passphrase', invite_code: await invite() });
    expect(reg.status).toBe(201);
    const mail = lastMailTo(email)!;
    expect(mail).toBeTruthy();
    expect(mail.headers['list-unsubscribe']).toBe('<http://app.test/account?tab=notifications>');
    expect(mail.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
    const plain = mail.decoded;
    expect(plain).toContain('http://app.test/account?tab=notifications');
    const token = linkToken(plain, 'http://app.test/verify-email');
    expect(token).toBeTruthy();
    const ok = await api(t.app, 'POST', '/api/auth/verify-email', { body: { token } });
    expect(ok.status).toBe(200);
    const me = await api(t.app, 'GET', '/api/auth/me', { token: reg.body.token });
    expect(me.body.email_verified).toBe(true);
    const again = await api(t.app, 'POST', '/api/auth/verify-email', { body: { token } });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_token');
  });

  it('an expired verification link is refused', async () => {
    const u = await createUser(t, { email_verified: false });
    const res = await api(t.app, 'POST', '/api/auth/resend-verification', { token: u.token });
    expect(res.status).toBe(200);
    const token = linkToken(lastMailTo(u.email)!.decoded, 'http://app.test/verify-email')!;
    await t.db
      .updateTable('email_tokens')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('user_id', '=', u.id)
      .execute();
    const r = await api(t.app, 'POST', '/api/auth/verify-email', { body: { token } });
    expect(r.status).toBe(400);
  });
});

describe('password reset and change', () => {
  it('forgot-password answers ok for unknown and known e-mails; reset screens, rotates pv and old tokens get 401', async () => {
    const unknown = await api(t.app, 'POST', '/api/auth/forgot-password', { body: { email: uniqueEmail() } });
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual({ ok: true });
    const u = await createUser(t);
    const res = await api(t.app, 'POST', '/api/auth/forgot-password', { body: { email: u.email } });
    expect(res.body).toEqual({ ok: true });
    const mail = lastMailTo(u.email)!;
    expect(mail.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
    const token = linkToken(mail.decoded, 'http://app.test/reset-password')!;
    expect(token).toBeTruthy();
    const breached = await api(t.app, 'POST', '/api/auth/reset-password', { body: { token, password: BREACHED } });
    expect(breached.status).toBe(400);
    expect(breached.body.error).toBe('breached_password');
    const ok = await api(t.app, 'POST', '/api/auth/reset-password', {
      body: { token, password: 'brand new passphrase' },
    });
    expect(ok.status).toBe(200);
    const old = await api(t.app, 'GET', '/api/auth/me', { token: u.token });
    expect(old.status).toBe(401);
    expect(old.body.error).toBe('password_changed');
    expect(old.body.message).toMatch(/log in again/);
    const login = await api(t.app, 'POST', '/api/auth/login', {
      body: { email: u.email, password: 'brand new passphrase' },
    });
    expect(login.status).toBe(200);
    expect(login.body.user).toBeTruthy();
    const reuse = await api(t.app, 'POST', '/api/auth/reset-password', {
      body: { token, password: 'another passphrase' },
    });
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe('invalid_token');
  });

  it('change-password checks the current password, screens the new one, returns a new token and revokes old ones', async () => {
    const u = await createUser(t);
    const wrong = await api(t.app, 'POST', '/api/auth/change-password', {
      token: u.token,
      body: { current_password: 'nope nope nope', new_password: 'new passphrase 1' },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe('wrong_password');
    const breached = await api(t.app, 'POST', '/api/auth/change-password', {
      token: u.token,
      body: { current_password: u.password, new_password: BREACHED },
    });
    expect(breached.body.error).toBe('breached_password');
    const ok = await api(t.app, 'POST', '/api/auth/change-password', {
      token: u.token,
      body: { current_password: u.password, new_password: 'new passphrase 1' },
    });
    expect(ok.status).toBe(200);
    expect((await api(t.app, 'GET', '/api/auth/me', { token: u.token })).status).toBe(401);
    expect((await api(t.app, 'GET', '/api/auth/me', { token: ok.body.token })).status).toBe(200);
    expect(lastMailTo(u.email)!.headers.subject).toMatch(/password was changed/i);
    const noToken = await api(t.app, 'POST', '/api/auth/change-password', {
      body: { current_password: 'x', new_password: 'y' },
    });
    expect(noToken.status).toBe(401);
  });
});

describe('hostile input', () => {
  it('wrong types and missing fields give 400 invalid_request with details', async () => {
    const res = await api(t.app, 'POST', '/api/auth/register', { body: { email: 42, password: ['x'] } });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
    expect(Array.isArray(res.body.details)).toBe(true);
    const missing = await api(t.app, 'POST', '/api/auth/login', { body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.details[0].path).toMatch(/email|password/);
    const arr = await api(t.app, 'POST', '/api/auth/login', { body: [1, 2] });
    expect(arr.status).toBe(400);
    // JSON bodies are not coerced: a number where a string belongs is refused …
    const num = await api(t.app, 'POST', '/api/auth/login', { body: { email: 'a@b.cd', password: 12345678 } });
    expect(num.status).toBe(400);
    const count = await api(t.app, 'POST', '/api/crm/admin/invites', { token: admin.token, body: { count: '2' } });
    expect(count.status).toBe(400);
    // … while query strings still are (they are text by nature).
    const q = await api(t.app, 'GET', '/api/crm/admin/outbox?limit=2', { token: admin.token });
    expect(q.status).toBe(200);
  });

  it('oversized bodies give 413 and malformed JSON 400, without a stack trace', async () => {
    const big = await api(t.app, 'POST', '/api/auth/login', {
      payload: JSON.stringify({ email: 'a@b.c', password: 'x'.repeat(2 * 1024 * 1024) }),
      headers: { 'content-type': 'application/json' },
    });
    expect(big.status).toBe(413);
    expect(big.body.error).toBe('payload_too_large');
    const bad = await api(t.app, 'POST', '/api/auth/login', {
      payload: '{"email":',
      headers: { 'content-type': 'application/json' },
    });
    expect(bad.status).toBe(400);
    expect(bad.text).not.toMatch(/at .*\.ts:\d+/);
  });

  it('SQL and HTML in strings are stored and returned verbatim', async () => {
    const name = `Robert'); DROP TABLE users;-- <script>alert(1)</script>`;
    const res = await register({
      email: uniqueEmail(),
      password: 'a fine passphrase',
      invite_code: await invite(),
      name,
    });
    expect(res.status).toBe(201);
    expect(res.body.user.name).toBe(name);
    const login = await api(t.app, 'POST', '/api/auth/login', {
      body: { email: "' OR 1=1 --@x.io", password: "' OR '1'='1" },
    });
    expect(login.status).toBe(401);
    expect((await api(t.app, 'GET', '/api/auth/me', { token: admin.token })).status).toBe(200);
  });
});

describe('password-version check when the store is unreachable', () => {
  it('fails closed: a valid token is not accepted on its own claims (503 auth_unavailable)', async () => {
    const other = await buildTestApp();
    const u = await createUser(other, { role: 'admin' });
    await other.database.close();
    const res = await api(other.app, 'GET', '/api/auth/me', { token: u.token });
    expect([res.status, res.body.error]).toEqual([503, 'auth_unavailable']);
    expect(res.text).not.toContain(u.email);
    // The database is closed already (closing it again may throw): close the app, then remove its data directory.
    await other.close().catch(() => {});
    fs.rmSync(other.dataDir, { recursive: true, force: true });
  });
});
