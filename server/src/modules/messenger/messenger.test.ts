/**
 * Messenger workers that answer, against the local bot API: a message in, a run, a reply out; strangers
 * refused; commands; linking a chat with a one-time code; one poller per bot across instances; a restart does
 * not re-handle an update; unbinding stops the poller; a revoked token unbinds; flood limits are waited out.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { api, buildTestApp, createProject, createUser, TEST_KEYS, type TestApp } from '../../../test/helpers.ts';
import { startLlmStandIn } from '../../../test/standins/llm.ts';
import { startMessengerStandIn } from '../../../test/standins/messenger.ts';
import { giveKey, waitFor } from '../../../test/runtime-fixtures.ts';
import { buildApp } from '../../app.ts';
import { createDeps } from '../../deps.ts';
import { silentLogger } from '../../lib/logger.ts';
import { createServices } from '../../services.ts';

const TOKEN_A = '510000001:AAMessengerWorkerTokenOne_abcdefg';
const TOKEN_B = '510000002:AAMessengerWorkerTokenTwo_abcdefg';
const TOKEN_C = '510000003:AAMessengerWorkerTokenThree_abcde';
const OWNER_CHAT = 777000111;
const STRANGER_CHAT = 777000999;

let llm: Awaited<ReturnType<typeof startLlmStandIn>>;
let bot: Awaited<ReturnType<typeof startMessengerStandIn>>;
let t: TestApp;
let owner: Awaited<ReturnType<typeof createUser>>;
let project: { id: number; name: string };
let dev: number;
const env = () => ({
  LLM_BASE_URL: llm.anthropicUrl,
  MESSENGER_API_URL: bot.url,
  MESSENGER_POLL_TIMEOUT_S: '1',
  MESSENGER_LEASE_MS: '3000',
});

beforeAll(async () => {
  llm = await startLlmStandIn();
  bot = await startMessengerStandIn({
    [TOKEN_A]: { id: 510000001, username: 'crew_dev_bot' },
    [TOKEN_B]: { id: 510000002, username: 'crew_qa_bot' },
    [TOKEN_C]: { id: 510000003, username: 'crew_ops_bot' },
  });
  t = await buildTestApp({ env: env() });
  owner = await createUser(t);
  await giveKey(t, owner.id);
  project = await createProject(t, owner.id);
  const w = await api(t.app, 'POST', `/api/crm/projects/${project.name}/workers`, {
    token: owner.token,
    body: { label: 'Dev' },
  });
  dev = w.body.id;
});
afterAll(async () => {
  await t?.close();
  await bot?.close();
  await llm?.close();
});
beforeEach(() => {
  llm.respond(() => ({ content: [{ type: 'text', text: 'ok' }] }));
});

const B = () => `/api/crm/projects/${project.name}/workers`;
/** The texts sent to `chat` after the first `from` of them, waiting until there are `n` more. */
async function repliesTo(chat: number, from: number, n = 1): Promise<string[]> {
  return waitFor(async () => {
    const got = bot.sentTo(chat).slice(from);
    return got.length >= n ? got.map((c) => c.body.text as string) : undefined;
  }, 25_000);
}

describe('a worker bot', () => {
  it('starts polling when bound; refuses strangers; links the owner chat with a one-time code', async () => {
    const bind = await api(t.app, 'POST', `${B()}/${dev}/telegram-token`, {
      token: owner.token,
      body: { token: TOKEN_A },
    });
    expect(bind.body).toEqual({ ok: true, started: true, bot_username: 'crew_dev_bot' });
    // `started` means an instance holds the bot's lease; this instance registers its poller a moment after taking
    // it (on PostgreSQL the bind's check can see the lease before the reconciliation's own continuation runs).
    await waitFor(async () => t.services.messenger.localPollers().length === 1, 3000);
    expect(t.services.messenger.localPollers()).toEqual(['510000001']);

    // A stranger: one short refusal and nothing else (no run, no model call).
    const calls0 = llm.modelCalls().length;
    bot.pushMessage(TOKEN_A, STRANGER_CHAT, 'run rm -rf / for me');
    expect(await repliesTo(STRANGER_CHAT, 0)).toEqual(['Sorry, this bot answers its owner only.']);
    // The owner has not linked a chat yet: their messages are refused the same way.
    bot.pushMessage(TOKEN_A, OWNER_CHAT, 'hello');
    expect((await repliesTo(OWNER_CHAT, 0))[0]).toContain('answers its owner only');

    // Link: the code from the account page, sent with /start.
    const code = await api(t.app, 'POST', '/api/crm/account/messenger-link', { token: owner.token });
    expect(code.status).toBe(200);
    expect(code.body.code).toMatch(/^[A-Z2-9]{8}$/);
    expect(code.body.command).toBe(`/start ${code.body.code}`);
    // A wrong code links nothing.
    bot.pushMessage(TOKEN_A, STRANGER_CHAT, '/start AAAAAAAA');
    expect((await repliesTo(STRANGER_CHAT, 1))[0]).toContain('not valid');
    bot.pushMessage(TOKEN_A, OWNER_CHAT, code.body.command);
    expect((await repliesTo(OWNER_CHAT, 1))[0]).toContain('now linked');
    const me = await api(t.app, 'GET', '/api/auth/me', { token: owner.token });
    expect(me.body.chat_id).toBe(String(OWNER_CHAT));
    // The code is spent: a second use (from the stranger) links nothing.
    bot.pushMessage(TOKEN_A, STRANGER_CHAT, code.body.command);
    expect((await repliesTo(STRANGER_CHAT, 2))[0]).toContain('not valid');
    expect(llm.modelCalls().length).toBe(calls0);
  });

  it('a message from the owner chat becomes a metered run, and the reply goes back', async () => {
    llm.respond(() => ({
      content: [{ type: 'text', text: 'Hi! The login bug is fixed.' }],
      usage: { input_tokens: 40, output_tokens: 8 },
    }));
    const n = bot.sentTo(OWNER_CHAT).length;
    bot.pushMessage(TOKEN_A, OWNER_CHAT, 'How is the login bug?');
    expect(await repliesTo(OWNER_CHAT, n)).toEqual(['Hi! The login bug is fixed.']);
    // The message went to the model as the worker's conversation.
    expect(JSON.stringify(llm.modelCalls().at(-1))).toContain('How is the login bug?');
    const runs = await api(t.app, 'GET', `/api/crm/projects/${project.name}/runs?worker_id=${dev}`, {
      token: owner.token,
    });
    expect(runs.body.runs[0]).toMatchObject({ status: 'succeeded', reply: 'Hi! The login bug is fixed.' });
    const usage = await t.db
      .selectFrom('token_usage')
      .select(['total_tokens', 'source'])
      .where('run_id', '=', runs.body.runs[0].id)
      .execute();
    expect(usage.reduce((a, r) => a + Number(r.total_tokens), 0)).toBe(48);
    const ev = await t.db
      .selectFrom('activity_log')
      .select(['type', 'worker_id'])
      .where('type', '=', 'messenger_message')
      .where('project_id', '=', project.id)
      .execute();
    expect(ev).toEqual([{ type: 'messenger_message', worker_id: dev }]);
  });

  it('splits a long reply at the limit and offers closing choices as buttons; a press is a message', async () => {
    const long = `${'The plan is ready. '.repeat(300)}\n\nWhich one first?\n1. Tests\n2. Docs`;
    llm.respond(() => ({ content: [{ type: 'text', text: long }] }));
    const n = bot.sentTo(OWNER_CHAT).length;
    bot.pushMessage(TOKEN_A, OWNER_CHAT, 'make a plan');
    const parts = await repliesTo(OWNER_CHAT, n, 2);
    expect(parts.length).toBe(2);
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(4096);
    const calls = bot.sentTo(OWNER_CHAT).slice(n);
    expect(calls[0].body.reply_markup).toBeUndefined();
    expect(calls[1].body.reply_markup).toEqual({
      inline_keyboard: [[{ text: 'Tests', callback_data: 'Tests' }], [{ text: 'Docs', callback_data: 'Docs' }]],
    });
    llm.respond(() => ({ content: [{ type: 'text', text: 'Writing tests.' }] }));
    bot.pushCallback(TOKEN_A, OWNER_CHAT, 'Tests');
    expect(await repliesTo(OWNER_CHAT, n + 2)).toEqual(['Writing tests.']);
    expect(JSON.stringify(llm.modelCalls().at(-1))).toContain('Tests');
    // The press was acknowledged with its id.
    const acks = bot.calls.filter((c) => c.method === 'answerCallbackQuery' && c.token === TOKEN_A);
    expect(acks).toHaveLength(1);
    expect(acks[0].body).toEqual({ callback_query_id: expect.stringMatching(/^\d+$/) });
  });

  it('answers /status, /issues and /help without the model', async () => {
    await api(t.app, 'POST', `/api/crm/projects/${project.name}/issues`, {
      token: owner.token,
      body: { title: 'Fix the signup form', priority: 'P1' },
    });
    const calls0 = llm.modelCalls().length;
    const n = bot.sentTo(OWNER_CHAT).length;
    bot.pushMessage(TOKEN_A, OWNER_CHAT, '/status');
    expect((await repliesTo(OWNER_CHAT, n))[0]).toMatch(/^Dev: idle\. Tokens today: \d+/);
    bot.pushMessage(TOKEN_A, OWNER_CHAT, '/issues@crew_dev_bot');
    expect((await repliesTo(OWNER_CHAT, n + 1))[0]).toMatch(/Open issues in .* \(1\):\n#1 Fix the signup form \(P1\)/);
    bot.pushMessage(TOKEN_A, OWNER_CHAT, '/help');
    expect((await repliesTo(OWNER_CHAT, n + 2))[0]).toContain('/status');
    expect(llm.modelCalls().length).toBe(calls0);
  });

  it('a spent budget is answered with the reason, without a run', async () => {
    await t.db.updateTable('users').set({ plan: 'free' }).where('id', '=', owner.id).execute();
    const cap = await t.services.usage.capFor(owner.id);
    await t.db
      .insertInto('token_usage')
      .values({
        user_id: owner.id,
        project_id: project.id,
        worker_id: dev,
        input_tokens: cap! + 1,
        output_tokens: 0,
        total_tokens: cap! + 1,
        source: 'worker',
      } as never)
      .execute();
    const n = bot.sentTo(OWNER_CHAT).length;
    const calls0 = llm.modelCalls().length;
    bot.pushMessage(TOKEN_A, OWNER_CHAT, 'one more thing');
    expect((await repliesTo(OWNER_CHAT, n))[0]).toMatch(/budget|limit|tokens/i);
    expect(llm.modelCalls().length).toBe(calls0);
    await t.db.deleteFrom('token_usage').where('user_id', '=', owner.id).execute();
  });
});

describe('pollers', { timeout: 60_000 }, () => {
  it('a second instance does not poll a bot another instance holds, and takes it over when that one dies', async () => {
    // A second instance of the service over the same database (its own queue, bus and pollers).
    const services2 = createServices(createDeps(t.config, t.database, TEST_KEYS, silentLogger));
    await services2.lifecycle.start();
    try {
      await new Promise((r) => setTimeout(r, 2500));
      expect(services2.messenger.localPollers()).toEqual([]);
      expect(t.services.messenger.localPollers()).toEqual(['510000001']);
      expect(bot.conflicts()).toBe(0);
      // The first instance "dies": its poller stops, its lease is left to expire.
      await t.services.messenger.stop();
      await t.db
        .updateTable('messenger_pollers')
        .set({ lease_owner: 'a-dead-instance', lease_expires_at: sql<Date>`now() + interval '2 seconds'` })
        .execute();
      await new Promise((r) => setTimeout(r, 1000));
      expect(services2.messenger.localPollers()).toEqual([]);
      await waitFor(async () => services2.messenger.localPollers().length === 1, 8000);
      const n = bot.sentTo(OWNER_CHAT).length;
      llm.respond(() => ({ content: [{ type: 'text', text: 'still here' }] }));
      bot.pushMessage(TOKEN_A, OWNER_CHAT, 'are you there?');
      expect(await repliesTo(OWNER_CHAT, n)).toEqual(['still here']);
    } finally {
      await services2.lifecycle.stop();
      await t.services.messenger.start();
    }
  });

  it('a restart does not handle an update a second time', async () => {
    const handled = await t.db
      .selectFrom('messenger_updates')
      .select(['update_id'])
      .where('bot_id', '=', '510000001')
      .where('kind', '=', 'message')
      .orderBy('update_id', 'desc')
      .executeTakeFirstOrThrow();
    await t.services.messenger.stop();
    // The stored offset is past every handled update; the lease is free.
    const row = await t.db
      .selectFrom('messenger_pollers')
      .selectAll()
      .where('bot_id', '=', '510000001')
      .executeTakeFirstOrThrow();
    expect(Number(row.update_offset)).toBeGreaterThan(Number(handled.update_id));
    expect(row.lease_owner).toBeNull();
    // A crash between the commit and the next poll: the stored offset goes back and the messenger delivers
    // the update again. The record of handled updates keeps it from being answered twice.
    await t.db
      .updateTable('messenger_pollers')
      .set({ update_offset: Number(handled.update_id) })
      .execute();
    bot.redeliver(TOKEN_A, Number(handled.update_id));
    const runsBefore = await t.db
      .selectFrom('agent_runs')
      .select(sql<number>`count(*)::int`.as('n'))
      .executeTakeFirstOrThrow();
    const n = bot.sentTo(OWNER_CHAT).length;
    const app2 = await buildApp(createDeps(t.config, t.database, TEST_KEYS, silentLogger));
    await app2.ready();
    try {
      llm.respond(() => ({ content: [{ type: 'text', text: 'after restart' }] }));
      bot.pushMessage(TOKEN_A, OWNER_CHAT, 'after the restart');
      expect(await repliesTo(OWNER_CHAT, n)).toEqual(['after restart']);
      await new Promise((r) => setTimeout(r, 500));
      expect(bot.sentTo(OWNER_CHAT).length).toBe(n + 1);
      const runsAfter = await t.db
        .selectFrom('agent_runs')
        .select(sql<number>`count(*)::int`.as('n'))
        .executeTakeFirstOrThrow();
      expect(runsAfter.n).toBe(runsBefore.n + 1);
    } finally {
      await app2.close();
      await t.services.messenger.start();
    }
  });

  it('waits out a flood limit (429 retry_after)', async () => {
    await waitFor(async () => t.services.messenger.localPollers().length === 1, 8000);
    bot.flood(TOKEN_A, 2, 1);
    const since = Date.now();
    const n = bot.sentTo(OWNER_CHAT).length;
    llm.respond(() => ({ content: [{ type: 'text', text: 'after the flood' }] }));
    bot.pushMessage(TOKEN_A, OWNER_CHAT, 'ping');
    expect(await repliesTo(OWNER_CHAT, n)).toEqual(['after the flood']);
    // The 429 met the poll or the reply's sendMessage, whichever came first: the next call waited it out.
    const polls = bot.calls.filter((c) => c.token === TOKEN_A && c.at >= since - 2000);
    const i = polls.findIndex((c) => c.status === 429);
    expect(i).toBeGreaterThanOrEqual(0);
    // The same kind of call (the poll loop and the reply's sendMessage are separate paths) comes after the
    // wait. When the 429 met the poll, the reply can arrive while the poller still waits, so look for it.
    const refused = polls[i];
    const next = await waitFor(
      async () => bot.calls.find((c) => c.token === TOKEN_A && c.method === refused.method && c.at > refused.at),
      5000,
    );
    expect(next.at - refused.at).toBeGreaterThanOrEqual(1900);
  });

  it('unbinding stops the poller within seconds; a deleted worker too', async () => {
    const un = await api(t.app, 'DELETE', `${B()}/${dev}/telegram-token`, { token: owner.token });
    expect(un.body).toEqual({ ok: true, removed: true });
    await waitFor(async () => t.services.messenger.localPollers().length === 0, 3000);
    const at = Date.now();
    await new Promise((r) => setTimeout(r, 1500));
    expect(bot.calls.filter((c) => c.token === TOKEN_A && c.at > at)).toEqual([]);

    const w2 = (await api(t.app, 'POST', B(), { token: owner.token, body: { label: 'Ops' } })).body.id;
    expect(
      (await api(t.app, 'POST', `${B()}/${w2}/telegram-token`, { token: owner.token, body: { token: TOKEN_C } })).body
        .started,
    ).toBe(true);
    expect((await api(t.app, 'DELETE', `${B()}/${w2}`, { token: owner.token })).status).toBe(200);
    await waitFor(async () => t.services.messenger.localPollers().length === 0, 3000);
  });

  it('a revoked token unbinds the bot, records the event and e-mails the owner', async () => {
    const w3 = (await api(t.app, 'POST', B(), { token: owner.token, body: { label: 'QA' } })).body.id;
    await api(t.app, 'POST', `${B()}/${w3}/telegram-token`, { token: owner.token, body: { token: TOKEN_B } });
    bot.revoke(TOKEN_B);
    await waitFor(async () => {
      const g = await api(t.app, 'GET', `${B()}/${w3}/telegram-token`, { token: owner.token });
      return g.body.bound === false;
    }, 8000);
    await waitFor(async () => t.services.messenger.localPollers().length === 0, 3000);
    const ev = await t.db
      .selectFrom('activity_log')
      .select(['type', 'worker_id'])
      .where('type', '=', 'worker_bot_revoked')
      .execute();
    expect(ev).toEqual([{ type: 'worker_bot_revoked', worker_id: w3 }]);
    const mail = await t.deps.mailer.outbox(5);
    const sent = mail.items.find((m) => m.kind === 'bot_revoked')!;
    expect(sent.to).toBe(owner.email);
    expect(sent.text).toContain('@crew_qa_bot');
    expect(sent.text).not.toContain('AAMessengerWorkerTokenTwo');
  });
});
