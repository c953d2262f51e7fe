import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, buildTestApp, createUser, TEST_KEYS, uniqueEmail, type TestApp } from '../../../test/helpers.ts';
import { startSmtpStandIn } from '../../../test/standins/smtp.ts';
import { loadConfig } from '../../config.ts';
import { buildApp, type App } from '../../app.ts';
import { createDeps } from '../../deps.ts';
import { type Logger, silentLogger as silent } from '../../lib/logger.ts';

const CODE = /^svc-[A-Z0-9]{4}-[A-Z0-9]{4}$/;

let t: TestApp;
let smtp: Awaited<ReturnType<typeof startSmtpStandIn>>;
let admin: Awaited<ReturnType<typeof createUser>>;
let user: Awaited<ReturnType<typeof createUser>>;
let ipSeq = 0;
const freshIp = () => `10.20.${Math.floor(++ipSeq / 250)}.${ipSeq % 250}`;

const register = (body: Record<string, unknown>, ip = freshIp()) =>
  api(t.app, 'POST', '/api/auth/register', { body, headers: { 'x-forwarded-for': ip } });

async function invite(): Promise<string> {
  const res = await api(t.app, 'POST', '/api/crm/admin/invites', { token: admin.token, body: { count: 1 } });
  expect(res.status).toBe(200);
  return res.body.codes[0];
}

async function waitlistEntry(email: string) {
  const res = await api(t.app, 'GET', '/api/crm/admin/waitlist', { token: admin.token });
  expect(res.status).toBe(200);
  return (res.body.entries as any[]).filter((e) => e.email === email);
}

async function apply(email: string, message?: string) {
  const res = await api(t.app, 'POST', '/api/auth/waitlist', { body: { email, message } });
  expect(res.status).toBe(201);
  const [entry] = await waitlistEntry(email.toLowerCase());
  return entry as { id: number; email: string; status: string };
}

/** A second app over the same database, with extra environment (as a restart with a new configuration). */
async function appOver(base: TestApp, env: Record<string, string>, log: Logger = silent): Promise<App> {
  const config = loadConfig({ DATA_DIR: base.dataDir, BREACH_CHECK_URL: 'off', APP_URL: 'http://app.test', ...env });
  const app = await buildApp(createDeps(config, base.database, TEST_KEYS, log));
  await app.ready();
  return app;
}

beforeAll(async () => {
  smtp = await startSmtpStandIn();
  t = await buildTestApp({ env: { SMTP_URL: smtp.url, TRUST_PROXY: '1' } });
  admin = await createUser(t, { role: 'admin' });
  user = await createUser(t);
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

describe('admin routes need an administrator', () => {
  const routes: Array<[string, string, unknown?]> = [
    ['GET', '/api/crm/admin/invites'],
    ['POST', '/api/crm/admin/invites', { count: 1 }],
    ['DELETE', '/api/crm/admin/invites/svc-AAAA-BBBB'],
    ['GET', '/api/crm/admin/waitlist'],
    ['POST', '/api/crm/admin/waitlist/1/approve'],
    ['POST', '/api/crm/admin/waitlist/1/reject'],
    ['GET', '/api/crm/admin/users'],
    ['POST', '/api/crm/admin/users', { email: 'x@example.com', password: 'a fine passphrase' }],
    ['POST', '/api/crm/admin/users/1/plan', { plan: 'min' }],
    ['GET', '/api/crm/admin/outbox'],
  ];
  it('401 without a token and 403 admin_required for a user', async () => {
    for (const [method, url, body] of routes) {
      const anon = await api(t.app, method as any, url, { body });
      expect(anon.status, `${method} ${url}`).toBe(401);
      expect(anon.body.error).toBe('unauthorized');
      const asUser = await api(t.app, method as any, url, { body, token: user.token });
      expect(asUser.status, `${method} ${url}`).toBe(403);
      expect(asUser.body.error).toBe('admin_required');
    }
  });
});

describe('invite codes', () => {
  it('generates count codes of the format svc-XXXX-XXXX with a note; one by default', async () => {
    const res = await api(t.app, 'POST', '/api/crm/admin/invites', {
      token: admin.token,
      body: { count: 3, note: 'conference batch' },
    });
    expect(res.status).toBe(200);
    expect(res.body.ok).toBe(true);
    expect(res.body.count).toBe(3);
    expect(res.body.codes).toHaveLength(3);
    for (const c of res.body.codes) expect(c).toMatch(CODE);
    expect(new Set(res.body.codes).size).toBe(3);
    const list = await api(t.app, 'GET', '/api/crm/admin/invites', { token: admin.token });
    const mine = list.body.invites.filter((i: any) => res.body.codes.includes(i.code));
    expect(mine).toHaveLength(3);
    for (const i of mine)
      expect(i).toMatchObject({ note: 'conference batch', status: 'active', used_at: null, used_by_email: null });
    const one = await api(t.app, 'POST', '/api/crm/admin/invites', { token: admin.token, body: {} });
    expect(one.status).toBe(200);
    expect(one.body.codes).toHaveLength(1);
    expect(one.body.count).toBe(1);
  });

  it('count 0, 101 or not a number gives 400; 100 is accepted', async () => {
    for (const count of [0, 101, -1, 'many', 2.5]) {
      const res = await api(t.app, 'POST', '/api/crm/admin/invites', { token: admin.token, body: { count } });
      expect(res.status, String(count)).toBe(400);
      expect(res.body.error).toBe('invalid_request');
    }
    const max = await api(t.app, 'POST', '/api/crm/admin/invites', { token: admin.token, body: { count: 100 } });
    expect(max.status).toBe(200);
    expect(new Set(max.body.codes).size).toBe(100);
  });

  it('lists every code with total_active and total_used that follow use', async () => {
    const before = (await api(t.app, 'GET', '/api/crm/admin/invites', { token: admin.token })).body;
    expect(before.total_active).toBe(before.invites.filter((i: any) => i.status === 'active').length);
    expect(before.total_used).toBe(before.invites.filter((i: any) => i.status === 'used').length);
    const code = await invite();
    const mid = (await api(t.app, 'GET', '/api/crm/admin/invites', { token: admin.token })).body;
    expect(mid.total_active).toBe(before.total_active + 1);
    expect(mid.total_used).toBe(before.total_used);
    const email = uniqueEmail('invited');
    expect((await register({ email, password: 'a fine passphrase', invite_code: code })).status).toBe(201);
    const after = (await api(t.app, 'GET', '/api/crm/admin/invites', { token: admin.token })).body;
    expect(after.total_active).toBe(before.total_active);
    expect(after.total_used).toBe(before.total_used + 1);
    const used = after.invites.find((i: any) => i.code === code);
    expect(used.status).toBe('used');
    expect(used.used_by_email).toBe(email);
    expect(typeof used.used_at).toBe('string');
  });

  it('revokes an unused code (then it is gone and cannot register); a used one gives 409; an unknown one 404', async () => {
    const code = await invite();
    const res = await api(t.app, 'DELETE', `/api/crm/admin/invites/${code}`, { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body.ok).toBe(true);
    const list = (await api(t.app, 'GET', '/api/crm/admin/invites', { token: admin.token })).body;
    expect(list.invites.some((i: any) => i.code === code)).toBe(false);
    const reg = await register({ email: uniqueEmail(), password: 'a fine passphrase', invite_code: code });
    expect(reg.status).toBe(403);
    expect(reg.body.error).toBe('invalid_invite');
    const again = await api(t.app, 'DELETE', `/api/crm/admin/invites/${code}`, { token: admin.token });
    expect(again.status).toBe(404);

    const usedCode = await invite();
    expect(
      (await register({ email: uniqueEmail(), password: 'a fine passphrase', invite_code: usedCode })).status,
    ).toBe(201);
    const used = await api(t.app, 'DELETE', `/api/crm/admin/invites/${usedCode}`, { token: admin.token });
    expect(used.status).toBe(409);
    expect(used.body.error).toBe('invite_used');
    const stillListed = (await api(t.app, 'GET', '/api/crm/admin/invites', { token: admin.token })).body;
    expect(stillListed.invites.find((i: any) => i.code === usedCode).status).toBe('used');

    for (const unknown of ['svc-ZZZZ-ZZZZ', 'not-a-code']) {
      const r = await api(t.app, 'DELETE', `/api/crm/admin/invites/${unknown}`, { token: admin.token });
      expect(r.status, unknown).toBe(404);
      expect(r.body.error).toBe('invite_not_found');
    }
  });
});

describe('beta waitlist', () => {
  it('public application: 201 {ok:true}; an open application of one e-mail is stored once; bad e-mail 400', async () => {
    const email = uniqueEmail('apply');
    const first = await api(t.app, 'POST', '/api/auth/waitlist', { body: { email, message: 'I run a small agency' } });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ ok: true });
    const second = await api(t.app, 'POST', '/api/auth/waitlist', {
      body: { email: email.toUpperCase(), message: 'again' },
    });
    expect(second.status).toBe(201);
    expect(second.body).toEqual({ ok: true });
    const entries = await waitlistEntry(email);
    expect(entries).toHaveLength(1);
    expect(entries[0].message).toBe('I run a small agency');
    for (const bad of ['not-an-email', '', 'a@b', 42]) {
      const res = await api(t.app, 'POST', '/api/auth/waitlist', { body: { email: bad } });
      expect(res.status, String(bad)).toBe(400);
      expect(res.body.error).toBe('invalid_request');
    }
    expect((await api(t.app, 'POST', '/api/auth/waitlist', { body: {} })).status).toBe(400);
  });

  it('admin list: {entries:[{id,email,message,status,created_at}]}', async () => {
    const email = uniqueEmail('listed');
    await apply(email, 'hello');
    const res = await api(t.app, 'GET', '/api/crm/admin/waitlist', { token: admin.token });
    expect(res.status).toBe(200);
    const entry = res.body.entries.find((e: any) => e.email === email);
    expect(Object.keys(entry).sort()).toEqual(['created_at', 'email', 'id', 'message', 'status']);
    expect(entry).toMatchObject({ email, message: 'hello', status: 'open' });
    expect(Number.isInteger(entry.id)).toBe(true);
    expect(Number.isNaN(Date.parse(entry.created_at))).toBe(false);
  });

  it('approve: e-mails a fresh invite code with List-Unsubscribe headers, sets approved, the code registers; again 409', async () => {
    const email = uniqueEmail('approve');
    const entry = await apply(email);
    const res = await api(t.app, 'POST', `/api/crm/admin/waitlist/${entry.id}/approve`, { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body.ok).toBe(true);
    expect(res.body.email_sent).toBe(true);
    expect(res.body.invite_code).toMatch(CODE);
    const mail = [...smtp.messages].reverse().find((m) => m.to.includes(email));
    expect(mail).toBeTruthy();
    expect(mail!.decoded).toContain(res.body.invite_code);
    expect(mail!.headers['list-unsubscribe']).toBe('<http://app.test/account?tab=notifications>');
    expect(mail!.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
    expect((await waitlistEntry(email))[0].status).toBe('approved');
    const reg = await register({ email, password: 'a fine passphrase', invite_code: res.body.invite_code });
    expect(reg.status).toBe(201);
    expect(reg.body.user.email).toBe(email);
    const again = await api(t.app, 'POST', `/api/crm/admin/waitlist/${entry.id}/approve`, { token: admin.token });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('already_decided');
  });

  it('a mail sent over SMTP is kept in the outbox with its live tokens redacted (invite, verification, reset)', async () => {
    const email = uniqueEmail('redact');
    const entry = await apply(email);
    const approved = await api(t.app, 'POST', `/api/crm/admin/waitlist/${entry.id}/approve`, { token: admin.token });
    const code: string = approved.body.invite_code;
    const reg = await register({ email, password: 'a fine passphrase', invite_code: code });
    expect(reg.status).toBe(201);
    expect((await api(t.app, 'POST', '/api/auth/forgot-password', { body: { email } })).status).toBe(200);
    const delivered = smtp.messages.filter((m) => m.to.includes(email)).map((m) => m.decoded);
    const tokens = [...new Set(delivered.flatMap((d) => [...d.matchAll(/token=([A-Za-z0-9_-]+)/g)].map((m) => m[1])))];
    expect(tokens).toHaveLength(2);
    expect(delivered.join('\n')).toContain(code);
    const kept = await t.db.selectFrom('outbox').selectAll().where('to_addr', '=', email).execute();
    expect(kept.map((m) => m.kind).sort()).toEqual(['invite', 'reset_password', 'verify_email']);
    const stored = JSON.stringify(kept);
    for (const secret of [code, ...tokens]) expect(stored).not.toContain(secret);
    expect(kept.every((m) => m.status === 'sent' && m.text_body.includes('[redacted]'))).toBe(true);
    const listed = await api(t.app, 'GET', '/api/crm/admin/outbox?limit=50', { token: admin.token });
    expect(JSON.stringify(listed.body)).not.toContain(tokens[0]);
  });

  it('reject: {ok:true}, status rejected, no second decision; unknown id 404', async () => {
    const email = uniqueEmail('reject');
    const entry = await apply(email);
    const sentBefore = smtp.messages.length;
    const res = await api(t.app, 'POST', `/api/crm/admin/waitlist/${entry.id}/reject`, { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expect((await waitlistEntry(email))[0].status).toBe('rejected');
    expect(smtp.messages.length).toBe(sentBefore);
    expect(
      (await api(t.app, 'POST', `/api/crm/admin/waitlist/${entry.id}/reject`, { token: admin.token })).status,
    ).toBe(409);
    expect(
      (await api(t.app, 'POST', `/api/crm/admin/waitlist/${entry.id}/approve`, { token: admin.token })).status,
    ).toBe(409);
    for (const action of ['approve', 'reject']) {
      const r = await api(t.app, 'POST', `/api/crm/admin/waitlist/999999/${action}`, { token: admin.token });
      expect(r.status, action).toBe(404);
      expect(r.body.error).toBe('waitlist_entry_not_found');
    }
    expect((await api(t.app, 'POST', '/api/crm/admin/waitlist/abc/approve', { token: admin.token })).status).toBe(400);
  });

  it('without SMTP_URL: email_sent false and the message is kept in the outbox, visible to admins', async () => {
    const local = await buildTestApp();
    try {
      const a = await createUser(local, { role: 'admin' });
      const email = uniqueEmail('outbox');
      expect((await api(local.app, 'POST', '/api/auth/waitlist', { body: { email } })).status).toBe(201);
      const entry = (await api(local.app, 'GET', '/api/crm/admin/waitlist', { token: a.token })).body.entries.find(
        (e: any) => e.email === email,
      );
      const res = await api(local.app, 'POST', `/api/crm/admin/waitlist/${entry.id}/approve`, { token: a.token });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ ok: true, email_sent: false });
      expect(res.body.invite_code).toMatch(CODE);
      const outbox = await api(local.app, 'GET', '/api/crm/admin/outbox', { token: a.token });
      expect(outbox.status).toBe(200);
      const kept = outbox.body.items.find((m: any) => m.to === email);
      expect(kept).toMatchObject({ kind: 'invite', status: 'kept' });
      expect(kept.text).toContain(res.body.invite_code);
      expect(kept.text).toContain('http://app.test/account?tab=notifications');
      expect(outbox.body.total).toBeGreaterThanOrEqual(1);
    } finally {
      await local.close();
    }
  });
});

describe('admin user management', () => {
  it('lists users newest first with a total', async () => {
    const u = await createUser(t);
    const res = await api(t.app, 'GET', '/api/crm/admin/users', { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body.total).toBeGreaterThanOrEqual(2);
    expect(res.body.users[0]).toMatchObject({ id: u.id, email: u.email, role: 'user' });
    expect(res.body.users.some((x: any) => x.id === admin.id && x.role === 'admin')).toBe(true);
    expect(JSON.stringify(res.body)).not.toMatch(/password/);
  });

  it('creates a user without an invite (201 {user}); the account can log in; duplicate 409; bad plan 400', async () => {
    const email = uniqueEmail('made');
    const res = await api(t.app, 'POST', '/api/crm/admin/users', {
      token: admin.token,
      body: { email, password: 'a fine passphrase', name: 'Made By Admin', plan: 'beta', email_verified: true },
    });
    expect(res.status).toBe(201);
    expect(res.body.user).toMatchObject({
      email,
      name: 'Made By Admin',
      role: 'user',
      plan: 'beta',
      email_verified: true,
      chat_id: String(res.body.user.id),
    });
    const login = await api(t.app, 'POST', '/api/auth/login', { body: { email, password: 'a fine passphrase' } });
    expect(login.status).toBe(200);
    expect(login.body.needs_verification).toBe(false);
    const dup = await api(t.app, 'POST', '/api/crm/admin/users', {
      token: admin.token,
      body: { email: email.toUpperCase(), password: 'a fine passphrase' },
    });
    expect(dup.status).toBe(409);
    expect(dup.body.error).toBe('email_taken');
    const bad = await api(t.app, 'POST', '/api/crm/admin/users', {
      token: admin.token,
      body: { email: uniqueEmail(), password: 'a fine passphrase', plan: 'platinum' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid_request');
    const adminMade = await api(t.app, 'POST', '/api/crm/admin/users', {
      token: admin.token,
      body: { email: uniqueEmail(), password: 'a fine passphrase', role: 'admin' },
    });
    expect(adminMade.status).toBe(201);
    expect(adminMade.body.user).toMatchObject({ role: 'admin', plan: 'free', email_verified: false });
  });

  it('accounts made by an admin do not count toward the 3-per-address signup limit', async () => {
    const ip = '198.51.100.33';
    for (let i = 0; i < 4; i++) {
      const res = await api(t.app, 'POST', '/api/crm/admin/users', {
        token: admin.token,
        body: { email: uniqueEmail('bulk'), password: 'a fine passphrase' },
        headers: { 'x-forwarded-for': ip },
      });
      expect(res.status).toBe(201);
    }
    for (let i = 0; i < 3; i++) {
      const r = await register(
        { email: uniqueEmail(), password: 'a fine passphrase', invite_code: await invite() },
        ip,
      );
      expect(r.status, `signup ${i + 1}`).toBe(201);
    }
    const blocked = await register(
      { email: uniqueEmail(), password: 'a fine passphrase', invite_code: await invite() },
      ip,
    );
    expect(blocked.status).toBe(429);
  });

  it('sets a plan: {ok, plan}; the user sees it; unknown user 404; unknown plan 400', async () => {
    const u = await createUser(t);
    const res = await api(t.app, 'POST', `/api/crm/admin/users/${u.id}/plan`, {
      token: admin.token,
      body: { plan: 'min' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, plan: 'min' });
    expect((await api(t.app, 'GET', '/api/auth/me', { token: u.token })).body.plan).toBe('min');
    const unknown = await api(t.app, 'POST', '/api/crm/admin/users/999999/plan', {
      token: admin.token,
      body: { plan: 'min' },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('user_not_found');
    const bad = await api(t.app, 'POST', `/api/crm/admin/users/${u.id}/plan`, {
      token: admin.token,
      body: { plan: 'gold' },
    });
    expect(bad.status).toBe(400);
    expect((await api(t.app, 'GET', '/api/auth/me', { token: u.token })).body.plan).toBe('min');
  });
});

describe('bootstrap admin (ADMIN_EMAIL / ADMIN_PASSWORD)', () => {
  it('exists after ready(): logs in, role admin, e-mail verified; a restart does not duplicate it', async () => {
    const email = uniqueEmail('boot');
    const b = await buildTestApp({ env: { ADMIN_EMAIL: email.toUpperCase(), ADMIN_PASSWORD: 'bootstrap passphrase' } });
    try {
      const login = await api(b.app, 'POST', '/api/auth/login', { body: { email, password: 'bootstrap passphrase' } });
      expect(login.status).toBe(200);
      expect(login.body.needs_verification).toBe(false);
      const me = await api(b.app, 'GET', '/api/auth/me', { token: login.body.token });
      expect(me.body).toMatchObject({ email, role: 'admin', email_verified: true });
      expect((await api(b.app, 'GET', '/api/crm/admin/invites', { token: login.body.token })).status).toBe(200);
      const restarted = await appOver(b, { ADMIN_EMAIL: email, ADMIN_PASSWORD: 'bootstrap passphrase' });
      await restarted.close();
      const rows = await b.db.selectFrom('users').select('id').where('email', '=', email).execute();
      expect(rows).toHaveLength(1);
    } finally {
      await b.close();
    }
  });

  it('a changed ADMIN_PASSWORD is not applied to the existing admin; the start reports it in the log', async () => {
    const email = uniqueEmail('boot');
    const env = { ADMIN_EMAIL: email, ADMIN_PASSWORD: 'bootstrap passphrase' };
    const b = await buildTestApp({ env });
    /** A logger keeping its warnings. */
    const capture = () => {
      const warnings: Array<{ obj: object; msg?: string }> = [];
      const log: Logger = { ...silent, warn: (obj, msg) => void warnings.push({ obj, msg }), child: () => log };
      return { log, warnings };
    };
    try {
      // The same password: nothing to report.
      const same = capture();
      await (await appOver(b, env, same.log)).close();
      expect(same.warnings.filter((w) => w.msg?.includes('ADMIN_PASSWORD'))).toEqual([]);
      // The admin changes the password through the API; the restart keeps it and says so.
      const login = await api(b.app, 'POST', '/api/auth/login', { body: { email, password: 'bootstrap passphrase' } });
      const changed = await api(b.app, 'POST', '/api/auth/change-password', {
        token: login.body.token,
        body: { current_password: 'bootstrap passphrase', new_password: 'a newer passphrase 7' },
      });
      expect(changed.status).toBe(200);
      const after = capture();
      await (await appOver(b, env, after.log)).close();
      const reported = after.warnings.filter((w) => w.msg?.includes('ADMIN_PASSWORD'));
      expect(reported).toHaveLength(1);
      expect(reported[0].msg).toContain('was not applied');
      expect(reported[0].obj).toMatchObject({ email });
      expect(JSON.stringify(reported)).not.toContain('bootstrap passphrase');
      const status = async (password: string) =>
        (await api(b.app, 'POST', '/api/auth/login', { body: { email, password } })).status;
      expect(await status('a newer passphrase 7')).toBe(200);
      expect(await status('bootstrap passphrase')).toBe(401);
    } finally {
      await b.close();
    }
  });

  it('an existing account with that e-mail is never promoted, even with its address verified; the start says so', async () => {
    const b = await buildTestApp();
    try {
      const warnings: Array<{ obj: object; msg?: string }> = [];
      const log: Logger = { ...silent, warn: (obj, msg) => void warnings.push({ obj, msg }), child: () => log };
      const u = await createUser(b, { email_verified: true });
      await (await appOver(b, { ADMIN_EMAIL: u.email, ADMIN_PASSWORD: 'other passphrase' }, log)).close();
      const row = await b.db.selectFrom('users').select(['role']).where('id', '=', u.id).executeTakeFirstOrThrow();
      expect(row.role).toBe('user');
      expect((await api(b.app, 'GET', '/api/crm/admin/users', { token: u.token })).status).toBe(403);
      expect(warnings.some((w) => w.msg?.includes('not promoted'))).toBe(true);
    } finally {
      await b.close();
    }
  });
});
