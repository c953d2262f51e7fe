/**
 * Approvals told to the owner outside the web UI (docs/ARCHITECTURE.md, Approvals): the owner's linked messenger
 * chat gets the request with Approve / Deny buttons and decides there (a press, or a reply "deny: reason"); a
 * press from anyone else, a replayed press and a forged id change nothing; the owner's e-mail links to the card in
 * the web UI and carries nothing that decides. Against the local bot API, the SMTP stand-in and the LLM stand-in.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { api, buildTestApp, createProject, createUser, type TestApp } from '../../../test/helpers.ts';
import { startLlmStandIn } from '../../../test/standins/llm.ts';
import { startMessengerStandIn } from '../../../test/standins/messenger.ts';
import { startSmtpStandIn } from '../../../test/standins/smtp.ts';
import { createWorker, giveKey, waitFor, waitRun } from '../../../test/runtime-fixtures.ts';

const TOKEN = '520000001:AAApprovalsChannelTokenOne_abcdef';
const OWNER_CHAT = 778000111;
const STRANGER_CHAT = 778000999;
const GROUP_MEMBER = 778000555;

let llm: Awaited<ReturnType<typeof startLlmStandIn>>;
let bot: Awaited<ReturnType<typeof startMessengerStandIn>>;
let smtp: Awaited<ReturnType<typeof startSmtpStandIn>>;
let t: TestApp;
let owner: Awaited<ReturnType<typeof createUser>>;
let project: { id: number; name: string };
let dev: number;

beforeAll(async () => {
  llm = await startLlmStandIn();
  bot = await startMessengerStandIn({ [TOKEN]: { id: 520000001, username: 'approvals_dev_bot' } });
  smtp = await startSmtpStandIn();
  t = await buildTestApp({
    env: {
      LLM_BASE_URL: llm.anthropicUrl,
      MESSENGER_API_URL: bot.url,
      MESSENGER_POLL_TIMEOUT_S: '1',
      MESSENGER_LEASE_MS: '3000',
      SMTP_URL: smtp.url,
    },
  });
  owner = await createUser(t, { plan: 'free' });
  await giveKey(t, owner.id);
  project = await createProject(t, owner.id);
  dev = (await createWorker(t, project.id, { label: 'Dev', tools: ['issues'] })).id;
  await t.db
    .updateTable('workers')
    .set({ approvals: JSON.stringify([{ tool: 'create_issue', mode: 'always' }]) })
    .where('id', '=', dev)
    .execute();
  const bind = await api(t.app, 'POST', `/api/crm/projects/${project.name}/workers/${dev}/telegram-token`, {
    token: owner.token,
    body: { token: TOKEN },
  });
  expect(bind.body).toMatchObject({ ok: true, started: true });
  const code = await api(t.app, 'POST', '/api/crm/account/messenger-link', { token: owner.token });
  bot.pushMessage(TOKEN, OWNER_CHAT, code.body.command);
  await waitFor(async () => bot.sentTo(OWNER_CHAT).some((c) => String(c.body.text).includes('now linked')), 15_000);
});
afterAll(async () => {
  await t?.close();
  await bot?.close();
  await smtp?.close();
  await llm?.close();
});
beforeEach(() => {
  llm.respond(() => ({ content: [{ type: 'text', text: 'ok' }] }));
});

const approvalOf = (id: number) =>
  t.db.selectFrom('approvals').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const issues = () =>
  t.db.selectFrom('issues').select('title').where('project_id', '=', project.id).orderBy('number').execute();
const answersAfter = (n: number) => bot.calls.slice(n).filter((c) => c.method === 'answerCallbackQuery');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A run of Dev that waits before create_issue `title`; the request's message to the owner's chat. */
async function waiting(title: string) {
  llm.enqueue(
    { content: [{ type: 'tool_use', name: 'create_issue', input: { title } }] },
    { content: [{ type: 'text', text: `Done with ${title}.` }] },
  );
  const sentBefore = bot.sentTo(OWNER_CHAT).length;
  const r = await api(t.app, 'POST', `/api/crm/projects/${project.name}/message`, {
    token: owner.token,
    body: { worker_id: dev, text: `File ${title}` },
  });
  expect(r.status).toBe(202);
  const runId = r.body.run_ids[0] as number;
  expect((await waitRun(t, project.name, runId, owner.token)).status).toBe('waiting_approval');
  const [a] = (
    await api(t.app, 'GET', `/api/crm/projects/${project.name}/approvals?status=pending`, { token: owner.token })
  ).body.approvals;
  const msg = await waitFor(
    async () =>
      bot
        .sentTo(OWNER_CHAT)
        .slice(sentBefore)
        .find((c) => c.body.reply_markup),
    15_000,
  );
  const notice = await waitFor(() =>
    t.db.selectFrom('messenger_approval_notices').selectAll().where('approval_id', '=', a.id).executeTakeFirst(),
  );
  return { runId, a, msg, messageId: Number(notice.message_id) };
}

describe('approvals in the messenger', () => {
  it("the owner's chat gets buttons; only the owner's press decides, once; the message shows the decision", async () => {
    const before = llm.modelCalls().length;
    const { runId, a, msg, messageId } = await waiting('Via the bot');
    expect(msg.body.text).toContain('create_issue');
    expect(msg.body.text).toContain('Via the bot');
    expect(msg.body.reply_markup.inline_keyboard).toEqual([
      [
        { text: 'Approve', callback_data: `approve:${a.id}` },
        { text: 'Deny', callback_data: `deny:${a.id}` },
      ],
    ]);
    // Nobody else was told.
    expect(bot.sentTo(STRANGER_CHAT).some((c) => c.body.reply_markup)).toBe(false);

    // A stranger's chat, someone else in the owner's chat, and a forged id: nothing changes.
    let n = bot.calls.length;
    bot.pushCallback(TOKEN, STRANGER_CHAT, `approve:${a.id}`);
    bot.pushCallback(TOKEN, OWNER_CHAT, `approve:${a.id}`, { fromId: GROUP_MEMBER, messageId });
    bot.pushCallback(TOKEN, OWNER_CHAT, `approve:${a.id + 1000}`, { messageId });
    const refused = await waitFor(async () => (answersAfter(n).length >= 3 ? answersAfter(n) : undefined));
    expect(refused.map((c) => c.body.text)).toEqual([
      'Sorry, this bot answers its owner only.',
      'Sorry, this bot answers its owner only.',
      'This approval is unknown here.',
    ]);
    await sleep(300);
    expect(await approvalOf(a.id)).toMatchObject({ status: 'pending', decided_at: null });
    expect(llm.modelCalls().length - before).toBe(1);

    // The owner's press decides.
    n = bot.calls.length;
    const pressed = bot.pushCallback(TOKEN, OWNER_CHAT, `approve:${a.id}`, { messageId });
    const [ack] = await waitFor(async () => (answersAfter(n).length ? answersAfter(n) : undefined));
    expect(ack.body.text).toBe(`Approved by ${owner.email}.`);
    expect(await approvalOf(a.id)).toMatchObject({ status: 'approved', channel: 'messenger', decided_by: owner.email });
    const edit = await waitFor(async () => bot.calls.slice(n).find((c) => c.method === 'editMessageText'));
    expect(edit.body).toMatchObject({ chat_id: String(OWNER_CHAT), message_id: messageId });
    expect(edit.body.text).toContain(`Approved by ${owner.email}.`);
    expect(edit.body.reply_markup).toEqual({ inline_keyboard: [] });
    expect((await waitRun(t, project.name, runId, owner.token)).status).toBe('succeeded');
    expect(await issues()).toEqual([{ title: 'Via the bot' }]);
    expect(llm.modelCalls().length - before).toBe(2);

    // The same update again (a messenger that missed the acknowledgement), then a later Deny: nothing changes.
    n = bot.calls.length;
    bot.redeliver(TOKEN, pressed);
    bot.pushCallback(TOKEN, OWNER_CHAT, `deny:${a.id}`, { messageId });
    const late = await waitFor(async () => (answersAfter(n).length ? answersAfter(n) : undefined));
    await sleep(300);
    expect(answersAfter(n)).toHaveLength(1);
    expect(late[0].body.text).toBe(`Already decided: Approved by ${owner.email}.`);
    expect(await approvalOf(a.id)).toMatchObject({ status: 'approved', channel: 'messenger' });
    expect(bot.calls.slice(n).filter((c) => c.method === 'editMessageText')).toHaveLength(0);
    expect(await issues()).toEqual([{ title: 'Via the bot' }]);
    const ev = await t.db
      .selectFrom('activity_log')
      .select(['actor', 'payload'])
      .where('project_id', '=', project.id)
      .where('type', '=', 'approval_decided')
      .execute();
    expect(ev).toHaveLength(1);
    expect(ev[0].actor).toBe(owner.email);
    expect(ev[0].payload).toMatchObject({ approval_id: a.id, decision: 'approved', channel: 'messenger' });
  });

  it('a reply "deny: reason" to the request denies with the reason; a stranger\'s reply does not', async () => {
    const { runId, a, messageId } = await waiting('Too risky');
    const n = bot.sentTo(OWNER_CHAT).length;
    bot.pushMessage(TOKEN, STRANGER_CHAT, 'deny: go away', { replyTo: messageId });
    await waitFor(async () => bot.sentTo(STRANGER_CHAT).length > 0 && bot.sentTo(STRANGER_CHAT));
    await sleep(200);
    expect(await approvalOf(a.id)).toMatchObject({ status: 'pending' });

    bot.pushMessage(TOKEN, OWNER_CHAT, 'deny: not on a Friday', { replyTo: messageId });
    const [said] = await waitFor(async () => {
      const got = bot.sentTo(OWNER_CHAT).slice(n);
      return got.length ? got : undefined;
    });
    expect(said.body.text).toBe(`Denied by ${owner.email}: not on a Friday`);
    expect(await approvalOf(a.id)).toMatchObject({
      status: 'denied',
      reason: 'not on a Friday',
      channel: 'messenger',
      decided_by: owner.email,
    });
    expect((await waitRun(t, project.name, runId, owner.token)).status).toBe('succeeded');
    const result = llm.modelCalls().at(-1)!.body.messages.at(-1).content[0];
    expect(result).toMatchObject({ type: 'tool_result', is_error: true });
    expect(JSON.stringify(result.content)).toContain('not on a Friday');
    expect((await issues()).map((i) => i.title)).not.toContain('Too risky');
    const edit = await waitFor(async () =>
      bot.calls.find((c) => c.method === 'editMessageText' && c.body.message_id === messageId),
    );
    expect(edit.body.text).toContain('Denied by');
  });

  it('a run started from the chat waits without a reply, and its reply comes once it is approved', async () => {
    llm.enqueue(
      { content: [{ type: 'tool_use', name: 'create_issue', input: { title: 'From the chat' } }] },
      { content: [{ type: 'text', text: 'Filed from the chat.' }] },
    );
    const n = bot.sentTo(OWNER_CHAT).length;
    bot.pushMessage(TOKEN, OWNER_CHAT, 'File the chat issue');
    const msg = await waitFor(
      async () =>
        bot
          .sentTo(OWNER_CHAT)
          .slice(n)
          .find((c) => c.body.reply_markup),
      15_000,
    );
    const id = Number(/approve:(\d+)/.exec(msg.body.reply_markup.inline_keyboard[0][0].callback_data)![1]);
    await sleep(500);
    // Only the request: the pause is not the run's end, so no "could not finish" reply.
    expect(
      bot
        .sentTo(OWNER_CHAT)
        .slice(n)
        .map((c) => c.body.text),
    ).toEqual([msg.body.text]);
    const notice = await t.db
      .selectFrom('messenger_approval_notices')
      .select('message_id')
      .where('approval_id', '=', id)
      .executeTakeFirstOrThrow();
    bot.pushCallback(TOKEN, OWNER_CHAT, `approve:${id}`, { messageId: Number(notice.message_id) });
    await waitFor(
      async () =>
        bot
          .sentTo(OWNER_CHAT)
          .slice(n)
          .some((c) => c.body.text === 'Filed from the chat.'),
      15_000,
    );
    expect(
      bot
        .sentTo(OWNER_CHAT)
        .slice(n)
        .map((c) => c.body.text),
    ).toEqual([msg.body.text, 'Filed from the chat.']);
  });

  it('a decision in the web UI is not overridden by a later press in the chat', async () => {
    const { runId, a, messageId } = await waiting('Decided on the web');
    const d = await api(t.app, 'POST', `/api/crm/projects/${project.name}/approvals/${a.id}`, {
      token: owner.token,
      body: { decision: 'deny', reason: 'web said no' },
    });
    expect(d.body).toMatchObject({ status: 'denied', channel: 'web' });
    // The request's message shows the decision made on the web, and loses its buttons.
    const edit = await waitFor(
      async () => bot.calls.find((c) => c.method === 'editMessageText' && c.body.message_id === messageId),
      15_000,
    );
    expect(edit.body.text).toContain(`Denied by ${owner.email}: web said no`);
    expect(edit.body.reply_markup).toEqual({ inline_keyboard: [] });
    const n = bot.calls.length;
    bot.pushCallback(TOKEN, OWNER_CHAT, `approve:${a.id}`, { messageId });
    const [ack] = await waitFor(async () => (answersAfter(n).length ? answersAfter(n) : undefined));
    expect(ack.body.text).toBe(`Already decided: Denied by ${owner.email}: web said no`);
    expect(await approvalOf(a.id)).toMatchObject({ status: 'denied', channel: 'web' });
    expect((await waitRun(t, project.name, runId, owner.token)).status).toBe('succeeded');
  });
});

describe('approvals by e-mail', () => {
  it('the owner gets the call and a link to its card; opening the link decides nothing', async () => {
    const { runId, a } = await waiting('By mail');
    const mail = await waitFor(
      async () => smtp.messages.find((m) => m.to.includes(owner.email) && m.decoded.includes('By mail')),
      15_000,
    );
    expect(mail.headers.subject).toBe(`Approval needed: create_issue in ${project.name}`);
    const link = `http://app.test/projects/${encodeURIComponent(project.name)}/approvals?approval=${a.id}`;
    expect(mail.decoded).toContain(link);
    // No address in it decides: the only link to the service is the card's (and the notification settings).
    const links = [...mail.decoded.matchAll(/https?:\/\/[^\s"<>]+/g)].map((m) => m[0]);
    for (const l of links) expect(l.startsWith(link) || l.includes('/account?tab=notifications')).toBe(true);
    expect(mail.decoded).not.toMatch(/\/api\//);
    // Following the link (a GET, as a mail client's link preview would) changes nothing.
    const page = await t.app.inject({
      method: 'GET',
      url: link.replace('http://app.test', ''),
      headers: { accept: 'text/html' },
    });
    expect(page.statusCode).toBeLessThan(500);
    await sleep(200);
    expect(await approvalOf(a.id)).toMatchObject({ status: 'pending' });
    // Only one e-mail per request.
    expect(smtp.messages.filter((m) => m.decoded.includes(`approval=${a.id}`))).toHaveLength(1);
    await api(t.app, 'POST', `/api/crm/projects/${project.name}/approvals/${a.id}`, {
      token: owner.token,
      body: { decision: 'approve' },
    });
    expect((await waitRun(t, project.name, runId, owner.token)).status).toBe('succeeded');
  });
});
