/**
 * Mail transports through the HTTP API on a real database, against the e-mail API stand-in (the vendor's protocol)
 * and the SMTP stand-in: the e-mail API whenever EMAIL_API_KEY is in the secret store, a rotated key used by the
 * next mail (on another instance too, PostgreSQL only), SMTP once the key is unset, a failed delivery retried by
 * the job queue and visible to admins, and `failed` after the last attempt.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api, buildTestApp, buildTestCluster, createUser, type TestApp } from '../../../test/helpers.ts';
import { startEmailApiStandIn } from '../../../test/standins/email-api.ts';
import { startSmtpStandIn } from '../../../test/standins/smtp.ts';
import { MAIL_MAX_ATTEMPTS, retryDelayAfter } from './mail.ts';

const KEY_1 = 're_first_email_api_key_0123';
const KEY_2 = 're_rotated_email_api_key_4567';

let t: TestApp;
let emailApi: Awaited<ReturnType<typeof startEmailApiStandIn>>;
let smtp: Awaited<ReturnType<typeof startSmtpStandIn>>;
let admin: Awaited<ReturnType<typeof createUser>>;
let user: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  emailApi = await startEmailApiStandIn([KEY_1, KEY_2]);
  smtp = await startSmtpStandIn();
  t = await buildTestApp({
    env: { EMAIL_API_URL: emailApi.url, SMTP_URL: smtp.url, MAIL_FROM: 'crm@example.com', MAIL_RETRY_DELAY_S: '1' },
  });
  admin = await createUser(t, { role: 'admin' });
  user = await createUser(t);
});
afterAll(async () => {
  await t?.close();
  await emailApi?.close();
  await smtp?.close();
});

const setKey = (value: string) =>
  api(t.app, 'PUT', '/api/crm/platform/settings/EMAIL_API_KEY', { token: admin.token, body: { value } });
const forgot = (email = user.email) => api(t.app, 'POST', '/api/auth/forgot-password', { body: { email } });
const outbox = async (q = '') =>
  (await api(t.app, 'GET', `/api/crm/admin/outbox?limit=5${q}`, { token: admin.token })).body;
async function until<T>(fn: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('mail transports', () => {
  it('sends through the e-mail API when its key is set, in the vendor’s shape, and records it', async () => {
    expect((await setKey(KEY_1)).status).toBe(200);
    expect((await forgot()).status).toBe(200);
    const m = emailApi.messages.at(-1)!;
    expect(m).toMatchObject({ key: KEY_1, from: 'crm@example.com', to: [user.email], subject: 'Reset your password' });
    expect(m.text).toContain('http://app.test/reset-password?token=');
    expect(m.html).toContain('Manage e-mail notifications');
    expect(m.headers).toMatchObject({
      'List-Unsubscribe': '<http://app.test/account?tab=notifications>',
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    });
    expect(smtp.messages).toHaveLength(0);
    const top = (await outbox()).items[0];
    expect(top).toMatchObject({ to: user.email, status: 'sent', transport: 'api', attempts: 1, error: null });
  });

  it('uses a rotated key for the next mail, and SMTP once the key is unset', async () => {
    await setKey(KEY_2);
    const u2 = await createUser(t);
    await forgot(u2.email);
    expect(emailApi.messages.at(-1)).toMatchObject({ key: KEY_2, to: [u2.email] });
    const del = await api(t.app, 'DELETE', '/api/crm/platform/settings/EMAIL_API_KEY', { token: admin.token });
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({ name: 'EMAIL_API_KEY', set: false });
    const audit = await api(t.app, 'GET', '/api/crm/platform/audit?key=EMAIL_API_KEY', { token: admin.token });
    expect(audit.body.items[0]).toMatchObject({ action: 'delete', ok: true });
    const before = emailApi.messages.length;
    const u3 = await createUser(t);
    await forgot(u3.email);
    expect(emailApi.messages).toHaveLength(before);
    expect(smtp.messages.at(-1)!.to).toEqual([u3.email]);
    expect((await outbox()).items[0]).toMatchObject({ to: u3.email, status: 'sent', transport: 'smtp' });
    // Unsetting is for admins only.
    expect((await api(t.app, 'DELETE', '/api/crm/platform/settings/EMAIL_API_KEY', { token: user.token })).status).toBe(
      403,
    );
  });

  it('retries a failed delivery through the job queue; admins see it while it waits', async () => {
    await setKey(KEY_1);
    emailApi.failNext(1, 503);
    const u4 = await createUser(t);
    await forgot(u4.email);
    const waiting = (await outbox('&status=retrying')).items.find((i: any) => i.to === u4.email);
    expect(waiting).toMatchObject({ status: 'retrying', transport: 'api', attempts: 1 });
    expect(waiting.error).toContain('HTTP 503');
    expect(JSON.stringify(waiting)).not.toContain(KEY_1);
    const sent = await until(async () => {
      const item = (await outbox()).items.find((i: any) => i.to === u4.email);
      return item?.status === 'sent' ? item : undefined;
    });
    expect(sent).toMatchObject({ attempts: 2, error: null, transport: 'api' });
    expect(emailApi.messages.at(-1)!.to).toEqual([u4.email]);
  });

  it('gives up after the last attempt: the message is failed, with its error', async () => {
    emailApi.revoke(KEY_1);
    const u5 = await createUser(t);
    await forgot(u5.email);
    const row = (await outbox()).items.find((i: any) => i.to === u5.email);
    expect(row).toMatchObject({ status: 'retrying', attempts: 1 });
    // The attempts before the last one, as the job would have made them.
    await t.db
      .updateTable('outbox')
      .set({ attempts: MAIL_MAX_ATTEMPTS - 1 })
      .where('id', '=', row.id)
      .execute();
    await t.deps.mailer.retry(row.id);
    const failed = (await outbox('&status=failed')).items.find((i: any) => i.to === u5.email);
    expect(failed).toMatchObject({ status: 'failed', attempts: MAIL_MAX_ATTEMPTS, transport: 'api' });
    expect(failed.error).toContain('HTTP 403');
  });

  it('waits four times longer before each later attempt', () => {
    expect([1, 2, 3, 4].map((n) => retryDelayAfter(60, n))).toEqual([60, 240, 960, 3840]);
  });
});

describe.skipIf(inject('dbKind') !== 'postgres')('a rotated e-mail API key on several instances', () => {
  it('is used by the next mail of the other instance', async () => {
    const api2 = await startEmailApiStandIn([KEY_1, KEY_2]);
    const cluster = await buildTestCluster(2, { env: { EMAIL_API_URL: api2.url } });
    try {
      const [a, b] = cluster.instances;
      await a.deps.secrets.set('EMAIL_API_KEY', KEY_1);
      await b.deps.mailer.send({ to: 'x@example.com', subject: 's1', text: 't', kind: 'test' });
      await a.deps.secrets.set('EMAIL_API_KEY', KEY_2);
      await b.deps.mailer.send({ to: 'x@example.com', subject: 's2', text: 't', kind: 'test' });
      expect(api2.messages.map((m) => [m.subject, m.key])).toEqual([
        ['s1', KEY_1],
        ['s2', KEY_2],
      ]);
    } finally {
      await cluster.close();
      await api2.close();
    }
  });
});
