/**
 * Feedback and translation feedback through the HTTP API: the feedback_report event and the operator notification
 * (messenger stand-in), the admin lists, and accepted suggestions patching a copy of the repository's catalogs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, buildTestApp, createUser, type TestApp } from '../../../test/helpers.ts';
import { startMessengerStandIn } from '../../../test/standins/messenger.ts';

const BOT = '777:operator-bot-token-for-feedback';
let t: TestApp;
let messenger: Awaited<ReturnType<typeof startMessengerStandIn>>;
let admin: Awaited<ReturnType<typeof createUser>>;
let user: Awaited<ReturnType<typeof createUser>>;
let locales: string;

beforeAll(async () => {
  messenger = await startMessengerStandIn({ [BOT]: { id: 777, username: 'operator_bot' } });
  locales = fs.mkdtempSync(path.join(path.resolve('.tmp'), 'locales-'));
  fs.cpSync(path.resolve('locales'), locales, { recursive: true });
  t = await buildTestApp({
    env: { MESSENGER_API_URL: messenger.url, OPERATOR_CHAT_ID: '-100500', LOCALES_DIR: locales },
  });
  await t.deps.secrets.set('MASTER_BOT_TOKEN', BOT);
  admin = await createUser(t, { role: 'admin' });
  user = await createUser(t);
});
afterAll(async () => {
  await t?.close();
  await messenger?.close();
  fs.rmSync(locales, { recursive: true, force: true });
});

const waitFor = async (fn: () => boolean, ms = 3000) => {
  const end = Date.now() + ms;
  while (!fn() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
};

describe('feedback', () => {
  it('stores a report, records feedback_report and notifies the operator with 400 characters', async () => {
    const description = `${'d'.repeat(399)}XYZ-beyond-400`;
    const r = await api(t.app, 'POST', '/api/crm/feedback', {
      token: user.token,
      body: { type: 'bug', title: 'Broken button', description, project: 'demo', browser: 'Firefox 140' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: true, type: 'bug', title: 'Broken button' });
    await waitFor(() => messenger.calls.some((c) => c.method === 'sendMessage'));
    const sent = messenger.calls.find((c) => c.method === 'sendMessage')!;
    expect(sent.token).toBe(BOT);
    expect(sent.body.chat_id).toBe('-100500');
    expect(sent.body.text).toContain('Broken button');
    expect(sent.body.text).toContain('d'.repeat(399) + 'X');
    expect(sent.body.text).not.toContain('XYZ-beyond');
    const ev = await t.db
      .selectFrom('activity_log')
      .select(['type', 'payload'])
      .where('type', '=', 'feedback_report')
      .execute();
    expect(ev).toHaveLength(1);
    expect(ev[0].payload).toMatchObject({ type: 'bug', project: 'demo' });

    const list = await api(t.app, 'GET', '/api/crm/admin/feedback?limit=1', { token: admin.token });
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({
      count: 1,
      items: [{ type: 'bug', title: 'Broken button', user_email: user.email, browser: 'Firefox 140' }],
    });
    expect((await api(t.app, 'GET', '/api/crm/admin/feedback', { token: user.token })).status).toBe(403);
    expect((await api(t.app, 'GET', '/api/crm/admin/feedback?limit=501', { token: admin.token })).status).toBe(400);
  });

  it('answers at once when the messenger is down, and refuses bad fields', async () => {
    await t.deps.secrets.set('MASTER_BOT_TOKEN', '999:unknown-bot-token');
    const r = await api(t.app, 'POST', '/api/crm/feedback', {
      token: user.token,
      body: { type: 'idea', title: 'x', description: 'y' },
    });
    expect(r.status).toBe(400);
    for (const body of [
      { type: 'bug', title: 't'.repeat(201), description: 'y' },
      { type: 'bug', title: 'x', description: 'y'.repeat(5001) },
      { type: 'bug', title: '', description: 'y' },
    ])
      expect((await api(t.app, 'POST', '/api/crm/feedback', { token: user.token, body })).status).toBe(400);
    const ok = await api(t.app, 'POST', '/api/crm/feedback', {
      token: user.token,
      body: { type: 'other', title: 'still stored', description: 'the bot token is wrong' },
    });
    expect(ok.status).toBe(200);
    expect(
      (await api(t.app, 'POST', '/api/crm/feedback', { body: { type: 'bug', title: 'x', description: 'y' } })).status,
    ).toBe(401);
    await t.deps.secrets.set('MASTER_BOT_TOKEN', BOT);
  });
});

describe('translation feedback', () => {
  const MSGID = 'Your plan is now free';
  const suggest = (body: Record<string, unknown>) =>
    api(t.app, 'POST', '/api/crm/feedback/translation', { token: user.token, body });

  it('stores suggestions; lists, filters and counts them for admins', async () => {
    const a = await suggest({
      locale: 'uk',
      msgid: MSGID,
      suggestion: 'Тепер у вас безкоштовний план',
      severity: 'major',
    });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({ ok: true, status: 'open' });
    await suggest({ locale: 'de', msgid: 'Missing text', suggestion: 'Fehlt', severity: 'wrong', page_url: '/x' });
    for (const bad of [
      { locale: 'en', msgid: MSGID, suggestion: 'x', severity: 'minor' },
      { locale: 'uk', msgid: 'm'.repeat(1001), suggestion: 'x', severity: 'minor' },
      { locale: 'uk', msgid: MSGID, suggestion: 's'.repeat(2001), severity: 'minor' },
      { locale: 'uk', msgid: MSGID, suggestion: 'x', severity: 'critical' },
    ])
      expect((await suggest(bad)).status).toBe(400);
    const list = await api(t.app, 'GET', '/api/crm/admin/translations?locale=uk', { token: admin.token });
    expect(list.body).toMatchObject({ count: 1, items: [{ msgid: MSGID, status: 'open', severity: 'major' }] });
    const stats = await api(t.app, 'GET', '/api/crm/admin/translations/stats', { token: admin.token });
    expect(stats.body.stats).toEqual([
      { locale: 'de', total: 1, open_count: 1, accepted: 0, rejected: 0, critical_open: 1 },
      { locale: 'uk', total: 1, open_count: 1, accepted: 0, rejected: 0, critical_open: 0 },
    ]);
    expect((await api(t.app, 'GET', '/api/crm/admin/translations', { token: user.token })).status).toBe(403);
  });

  it('accept patches the catalog on disk; reject and repeats are refused; the glossary after 3', async () => {
    const file = path.join(locales, 'uk', 'server.po');
    const before = fs.readFileSync(file, 'utf8');
    const [open] = (await api(t.app, 'GET', '/api/crm/admin/translations?locale=uk', { token: admin.token })).body
      .items;
    const r = await api(t.app, 'POST', `/api/crm/admin/translations/${open.id}/accept`, {
      token: admin.token,
      body: { note: 'better' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: true, po_patched: true, glossary_suggestion: false });
    const after = fs.readFileSync(file, 'utf8');
    expect(after).toContain(`msgid "${MSGID}"\nmsgstr "Тепер у вас безкоштовний план"`);
    expect(after).not.toContain('Ваш план тепер безкоштовний');
    expect(after).toContain('#. billing e-mail subject');
    expect(after.split('msgid').length).toBe(before.split('msgid').length);
    expect(after.indexOf('Payment failed')).toBeLessThan(after.indexOf(MSGID));
    expect(fs.readFileSync(path.join(locales, 'de', 'server.po'), 'utf8')).toContain('Ihr Tarif ist jetzt kostenlos');

    const again = await api(t.app, 'POST', `/api/crm/admin/translations/${open.id}/accept`, {
      token: admin.token,
      body: {},
    });
    expect(again.status).toBe(409);
    expect(
      (await api(t.app, 'POST', '/api/crm/admin/translations/999999/reject', { token: admin.token, body: {} })).status,
    ).toBe(404);

    const [de] = (await api(t.app, 'GET', '/api/crm/admin/translations?locale=de', { token: admin.token })).body.items;
    const rej = await api(t.app, 'POST', `/api/crm/admin/translations/${de.id}/reject`, {
      token: admin.token,
      body: {},
    });
    expect(rej.body).toEqual({ ok: true });
    const acceptMissing = await suggest({
      locale: 'fr',
      msgid: 'Not in any catalog',
      suggestion: 'x',
      severity: 'minor',
    });
    const nm = await api(t.app, 'POST', `/api/crm/admin/translations/${acceptMissing.body.id}/accept`, {
      token: admin.token,
      body: {},
    });
    expect(nm.body).toMatchObject({ ok: true, po_patched: false });

    let last: any;
    for (const locale of ['de', 'fr']) {
      const s = await suggest({ locale, msgid: MSGID, suggestion: `${locale} v2`, severity: 'minor' });
      last = await api(t.app, 'POST', `/api/crm/admin/translations/${s.body.id}/accept`, {
        token: admin.token,
        body: {},
      });
    }
    expect(last.body).toEqual({ ok: true, po_patched: true, glossary_suggestion: true });
    const all = await api(t.app, 'GET', '/api/crm/admin/translations?status=all&limit=500', { token: admin.token });
    expect(all.body.items.map((i: any) => i.status).sort()).toEqual([
      'accepted',
      'accepted',
      'accepted',
      'accepted',
      'rejected',
    ]);
  });
});
