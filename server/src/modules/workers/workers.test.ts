import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, buildTestApp, createUser, IMAGES, multipartBody, type TestApp } from '../../../test/helpers.ts';
import { startMessengerStandIn } from '../../../test/standins/messenger.ts';

const TOKEN_A = '111111111:AAWorkerBotTokenNumberOne_abcdefg';
const TOKEN_B = '222222222:AAWorkerBotTokenNumberTwo_abcdefg';
let t: TestApp;
let bot: Awaited<ReturnType<typeof startMessengerStandIn>>;
let owner: Awaited<ReturnType<typeof createUser>>;
let other: Awaited<ReturnType<typeof createUser>>;
const B = '/api/crm/projects/crew/workers';

beforeAll(async () => {
  bot = await startMessengerStandIn({
    [TOKEN_A]: { id: 5001, username: 'crew_dev_bot' },
    [TOKEN_B]: { id: 5002, username: 'crew_qa_bot' },
  });
  t = await buildTestApp({ env: { MESSENGER_API_URL: bot.url, OPERATOR_EMAIL: 'operator@example.com' } });
  owner = await createUser(t, { plan: 'min' });
  other = await createUser(t);
  expect(
    (
      await api(t.app, 'POST', '/api/crm/projects/create', {
        token: owner.token,
        body: { displayName: 'Crew', projectName: 'crew' },
      })
    ).status,
  ).toBe(201);
});
afterAll(async () => {
  await t?.close();
  await bot?.close();
});

const add = (body: unknown, token = owner.token) => api(t.app, 'POST', B, { token, body });

describe('auth and validation', () => {
  it('401 without a token, 400 for bad bodies, 403 for other users', async () => {
    for (const [m, u] of [
      ['GET', '/api/crm/workers'],
      ['GET', '/api/crm/workers/presets'],
      ['GET', '/api/crm/model-tiers'],
      ['GET', '/api/crm/workers/templates'],
      ['GET', B],
      ['POST', B],
      ['POST', `${B}/1/telegram-token`],
      ['GET', `${B}/1/runtime`],
    ] as const) {
      expect((await api(t.app, m, u)).status, `${m} ${u}`).toBe(401);
    }
    expect((await add({ label: '' })).status).toBe(400);
    expect((await add({ label: 'x', max_turns: 0 })).status).toBe(400);
    expect((await add({ label: 'x', type: 'robot' })).status).toBe(400);
    expect((await add({ label: 'x', tools: { a: 1 } })).status).toBe(400);
    expect((await add({})).body.error).toBe('invalid_worker');
    expect((await add({ preset: 'nope' })).body.error).toBe('unknown_preset');
    expect(
      (await api(t.app, 'POST', '/api/crm/workers/templates', { token: owner.token, body: { name: 'x' } })).status,
    ).toBe(400);
    expect((await api(t.app, 'POST', `${B}/reorder`, { token: owner.token, body: { order: 'x' } })).status).toBe(400);
    expect((await api(t.app, 'GET', B, { token: other.token })).status).toBe(403);
    expect((await add({ label: 'x' }, other.token)).status).toBe(403);
  });
});

describe('CRUD, presets, tiers, order', () => {
  it('13 presets with prompts and tools; tiers with role defaults', async () => {
    const p = await api(t.app, 'GET', '/api/crm/workers/presets', { token: owner.token });
    expect(p.body.presets).toHaveLength(13);
    for (const pr of p.body.presets) {
      expect(pr.system_prompt.length).toBeGreaterThan(100);
      expect(pr.tools.length).toBeGreaterThan(0);
    }
    const tiers = await api(t.app, 'GET', '/api/crm/model-tiers', { token: owner.token });
    expect(tiers.body.tiers.map((x: any) => x.key)).toEqual(['fast', 'balanced', 'deep']);
    expect(tiers.body.roleDefaults.developer).toBe('fast');
    expect(tiers.body.roleDefaults.architect).toBe('balanced');
    expect(tiers.body.tiers.map((x: any) => x.stage)).toEqual([1, 2, 3]);
    expect(tiers.body.fallbackTier).toBe('balanced');
  });

  it('creates with defaults (max_turns 20) and from a preset, updates, lists, deletes', async () => {
    const a = await add({ label: 'Plain' });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({
      label: 'Plain',
      type: 'terminal',
      max_turns: 20,
      tools: [],
      avatar_pack: 'role',
      project_name: 'crew',
    });
    const b = await add({ preset: 'reviewer', label: 'Rita' });
    expect(b.body).toMatchObject({ label: 'Rita', role: 'reviewer', model: 'claude-opus-4-7' });
    const put = await api(t.app, 'PUT', `${B}/${a.body.id}`, {
      token: owner.token,
      body: { label: 'Plainer', tools: ['git'], max_turns: 7, focus_dirs: ['src'] },
    });
    expect(put.body).toMatchObject({ label: 'Plainer', tools: ['git'], max_turns: 7, focus_dirs: ['src'] });
    expect(
      (await api(t.app, 'PUT', `${B}/${a.body.id}`, { token: owner.token, body: { focus_dirs: ['/etc'] } })).status,
    ).toBe(400);
    expect((await api(t.app, 'PUT', `${B}/999999`, { token: owner.token, body: { label: 'x' } })).status).toBe(404);
    const list = await api(t.app, 'GET', B, { token: owner.token });
    expect(list.body.workers.map((w: any) => w.label)).toEqual(['Plainer', 'Rita']);
    const ev = await t.db.selectFrom('activity_log').select('type').where('worker_id', '=', b.body.id).execute();
    expect(ev.map((e) => e.type)).toEqual(['worker_created']);
    expect((await api(t.app, 'DELETE', `${B}/${b.body.id}`, { token: owner.token })).body).toEqual({
      ok: true,
      id: b.body.id,
    });
    expect((await api(t.app, 'GET', B, { token: owner.token })).body.workers).toHaveLength(1);
  });

  it('reorder puts listed ids first and appends the missing ones', async () => {
    const ids: number[] = (await api(t.app, 'GET', B, { token: owner.token })).body.workers.map((w: any) => w.id);
    const x = (await add({ label: 'X' })).body.id;
    const y = (await add({ label: 'Y' })).body.id;
    const res = await api(t.app, 'POST', `${B}/reorder`, { token: owner.token, body: { order: [y, 424242] } });
    expect(res.body).toEqual({ ok: true, count: ids.length + 2, order: [y, ...ids, x] });
    expect((await api(t.app, 'GET', B, { token: owner.token })).body.workers.map((w: any) => w.id)).toEqual([
      y,
      ...ids,
      x,
    ]);
  });

  it('GET /workers: own workers across projects; the operator sees every user', async () => {
    const mine = await api(t.app, 'GET', '/api/crm/workers', { token: owner.token });
    expect(mine.body.workers.length).toBeGreaterThan(0);
    expect(mine.body.workers.every((w: any) => w.project_name === 'crew' && w.owner_email === undefined)).toBe(true);
    expect((await api(t.app, 'GET', '/api/crm/workers', { token: other.token })).body.workers).toEqual([]);
    const op = await createUser(t, { email: 'operator@example.com' });
    const all = await api(t.app, 'GET', '/api/crm/workers', { token: op.token });
    expect(all.body.workers.some((w: any) => w.owner_email === owner.email)).toBe(true);
  });
});

describe('worker limit', () => {
  it('free: the 6th worker is 402 workers_limit; beta bypasses', async () => {
    const u = await createUser(t);
    await api(t.app, 'POST', '/api/crm/projects/create', {
      token: u.token,
      body: { displayName: 'L', projectName: 'lim' },
    });
    for (let i = 0; i < 5; i++)
      expect(
        (await api(t.app, 'POST', '/api/crm/projects/lim/workers', { token: u.token, body: { label: `w${i}` } }))
          .status,
      ).toBe(201);
    const res = await api(t.app, 'POST', '/api/crm/projects/lim/workers', { token: u.token, body: { label: 'w5' } });
    expect(res.status).toBe(402);
    expect(res.body).toMatchObject({
      error: 'plan_limit_reached',
      reason: 'workers_limit',
      current: 5,
      limit: 5,
      plan: 'free',
    });
    await t.db.updateTable('users').set({ plan: 'beta' }).where('id', '=', u.id).execute();
    expect(
      (await api(t.app, 'POST', '/api/crm/projects/lim/workers', { token: u.token, body: { label: 'w5' } })).status,
    ).toBe(201);
  });
});

describe('templates', () => {
  it('lists own and public, deletes only by the owner', async () => {
    const mk = await api(t.app, 'POST', '/api/crm/workers/templates', {
      token: owner.token,
      body: { name: 'My dev', config: { model: 'fast' }, is_public: true },
    });
    expect(mk.body).toMatchObject({ ok: true, id: expect.any(Number) });
    const seen = await api(t.app, 'GET', '/api/crm/workers/templates', { token: other.token });
    expect(seen.body.templates.find((x: any) => x.id === mk.body.id)).toMatchObject({
      name: 'My dev',
      owner: false,
      config: { model: 'fast' },
    });
    expect(
      (await api(t.app, 'DELETE', `/api/crm/workers/templates/${mk.body.id}`, { token: other.token })).status,
    ).toBe(403);
    expect(
      (await api(t.app, 'DELETE', `/api/crm/workers/templates/${mk.body.id}`, { token: owner.token })).body,
    ).toEqual({ ok: true });
    expect(
      (await api(t.app, 'DELETE', `/api/crm/workers/templates/${mk.body.id}`, { token: owner.token })).status,
    ).toBe(404);
  });
});

describe('avatars and icons', () => {
  let id: number;
  beforeAll(async () => {
    id = (await add({ label: 'Pic' })).body.id;
  });
  const up = (path: string, buf: Buffer, token = owner.token) => {
    const mp = multipartBody([{ name: 'file', value: buf, filename: 'a.bin', contentType: 'image/jpeg' }]);
    return api(t.app, 'POST', `${B}/${id}/${path}`, { token, payload: mp.payload, headers: mp.headers });
  };

  it('avatar: JPEG, PNG, WebP accepted by content; served; delete resets avatar_pack', async () => {
    expect((await api(t.app, 'GET', `${B}/${id}/avatar`, { token: owner.token })).status).toBe(404);
    for (const [k, mime] of [
      ['jpeg', 'image/jpeg'],
      ['png', 'image/png'],
      ['webp', 'image/webp'],
    ] as const) {
      const res = await up('avatar', IMAGES[k]);
      expect(res.body).toEqual({ ok: true, url: `/api/crm/projects/crew/workers/${id}/avatar` });
      const got = await api(t.app, 'GET', `${B}/${id}/avatar`, { token: owner.token });
      expect(got.headers['content-type']).toBe(mime);
    }
    const del = await api(t.app, 'DELETE', `${B}/${id}/avatar`, { token: owner.token });
    expect(del.body).toEqual({ ok: true, avatar_pack: 'role' });
    expect((await api(t.app, 'GET', `${B}/${id}/avatar`, { token: owner.token })).status).toBe(404);
  });

  it('avatar: GIF or text refused (400), over 2 MB 413, other users 403', async () => {
    expect((await up('avatar', IMAGES.gif)).body.error).toBe('invalid_image');
    expect((await up('avatar', Buffer.from('<svg></svg>'))).body.error).toBe('invalid_image');
    const big = await up('avatar', Buffer.concat([IMAGES.jpeg, Buffer.alloc(2 * 1024 * 1024)]));
    expect(big.status).toBe(413);
    expect(big.body.error).toBe('payload_too_large');
    expect((await up('avatar', IMAGES.png, other.token)).status).toBe(403);
  });

  it('icon: PNG and GIF only', async () => {
    expect((await up('upload-icon', IMAGES.gif)).status).toBe(200);
    expect((await up('upload-icon', IMAGES.jpeg)).body.error).toBe('invalid_image');
    expect((await api(t.app, 'GET', `${B}/${id}/icon`, { token: owner.token })).headers['content-type']).toBe(
      'image/gif',
    );
  });
});

describe('messenger bot', () => {
  let w1: number;
  let w2: number;
  beforeAll(async () => {
    w1 = (await add({ label: 'Dev Lead' })).body.id;
    w2 = (await add({ label: 'QA' })).body.id;
  });

  it('binds with getMe, shows it masked, 409 for the same bot on another worker, 400 for a rejected token, removes', async () => {
    const none = await api(t.app, 'GET', `${B}/${w1}/telegram-token`, { token: owner.token });
    expect(none.body).toEqual({ bound: false, token_masked: null, bot_username: null });
    const bind = await api(t.app, 'POST', `${B}/${w1}/telegram-token`, {
      token: owner.token,
      body: { token: TOKEN_A },
    });
    expect(bind.body).toEqual({ ok: true, started: true, bot_username: 'crew_dev_bot' });
    const got = await api(t.app, 'GET', `${B}/${w1}/telegram-token`, { token: owner.token });
    expect(got.body).toEqual({ bound: true, token_masked: '111111111:••••defg', bot_username: 'crew_dev_bot' });
    expect(got.text).not.toContain('AAWorkerBotTokenNumberOne');
    const dup = await api(t.app, 'POST', `${B}/${w2}/telegram-token`, { token: owner.token, body: { token: TOKEN_A } });
    expect(dup.status).toBe(409);
    expect(dup.body.error).toBe('bot_already_bound');
    const bad = await api(t.app, 'POST', `${B}/${w2}/telegram-token`, {
      token: owner.token,
      body: { token: '333:AAUnknownTokenUnknownToken00' },
    });
    expect(bad.body.error).toBe('invalid_bot_token');
    expect(bad.text).not.toContain('AAUnknownToken');
    expect((await api(t.app, 'POST', `${B}/${w2}/telegram-token`, { token: owner.token, body: {} })).status).toBe(400);
    expect(
      (await api(t.app, 'POST', `${B}/${w2}/telegram-token`, { token: owner.token, body: { token: TOKEN_B } })).body
        .bot_username,
    ).toBe('crew_qa_bot');
    expect((await api(t.app, 'DELETE', `${B}/${w2}/telegram-token`, { token: owner.token })).body).toEqual({
      ok: true,
      removed: true,
    });
    expect((await api(t.app, 'GET', `${B}/${w2}/telegram-token`, { token: owner.token })).body.bound).toBe(false);
  });

  it('notify sends through the bound bot to the owner chat; a no-op without a bot', async () => {
    const n0 = bot.calls.length;
    const res = await api(t.app, 'POST', `${B}/${w1}/notify`, {
      token: owner.token,
      body: {
        event: 'issue_close',
        text: 'Issue #4 closed',
        buttons: [{ text: 'Open', url: 'https://example.com/4' }],
      },
    });
    expect(res.body).toEqual({ ok: true, sent: true });
    const call = bot.calls.slice(n0).find((c) => c.method === 'sendMessage')!;
    expect(call.token).toBe(TOKEN_A);
    expect(call.body).toEqual({
      chat_id: String(owner.id),
      text: '[issue_close] Issue #4 closed',
      reply_markup: { inline_keyboard: [[{ text: 'Open', url: 'https://example.com/4' }]] },
    });
    const n1 = bot.calls.length;
    expect((await api(t.app, 'POST', `${B}/${w2}/notify`, { token: owner.token, body: { text: 'hi' } })).body).toEqual({
      ok: true,
      sent: false,
    });
    expect(bot.calls.length).toBe(n1);
    expect((await api(t.app, 'POST', `${B}/${w1}/notify`, { token: owner.token, body: {} })).status).toBe(400);
  });

  it('notify is a silent no-op with CRM_DISABLE_MESSENGER_NOTIFY=1', async () => {
    const t2 = await buildTestApp({ env: { MESSENGER_API_URL: bot.url, CRM_DISABLE_MESSENGER_NOTIFY: '1' } });
    try {
      const u = await createUser(t2);
      await api(t2.app, 'POST', '/api/crm/projects/create', {
        token: u.token,
        body: { displayName: 'N', projectName: 'n' },
      });
      const w = (await api(t2.app, 'POST', '/api/crm/projects/n/workers', { token: u.token, body: { label: 'w' } }))
        .body.id;
      await t2.db
        .updateTable('workers')
        .set({ messenger_token_enc: t2.deps.sealer.seal(TOKEN_B), messenger_bot_id: '5002x' })
        .where('id', '=', w)
        .execute();
      // Only what a notify would send counts: the pollers of both apps go on calling getUpdates meanwhile.
      const sends = () => bot.calls.filter((c) => c.method !== 'getUpdates').length;
      const n0 = sends();
      expect(
        (await api(t2.app, 'POST', `/api/crm/projects/n/workers/${w}/notify`, { token: u.token, body: { text: 'hi' } }))
          .body,
      ).toEqual({ ok: true, sent: false });
      expect(sends()).toBe(n0);
    } finally {
      await t2.close();
    }
  });

  it('suggest-bot-username: five names, hyphens removed, 32 characters, worker part cut first', async () => {
    const res = await api(t.app, 'POST', `${B}/${w1}/suggest-bot-username`, { token: owner.token });
    expect(res.body.candidates).toEqual([
      'crew_devlead_bot',
      'crew_devlead1_bot',
      'crew_devlead2_bot',
      'crew_devlead3_bot',
      'crew_devlead4_bot',
    ]);
    const u = await createUser(t);
    await api(t.app, 'POST', '/api/crm/projects/create', {
      token: u.token,
      body: { displayName: 'L', projectName: 'very-long-project-name-here' },
    });
    const w = (
      await api(t.app, 'POST', '/api/crm/projects/very-long-project-name-here/workers', {
        token: u.token,
        body: { label: 'Senior Backend Developer' },
      })
    ).body.id;
    const long = await api(
      t.app,
      'POST',
      `/api/crm/projects/very-long-project-name-here/workers/${w}/suggest-bot-username`,
      { token: u.token },
    );
    expect(long.body.candidates).toHaveLength(5);
    for (const c of long.body.candidates) {
      expect(c.length).toBeLessThanOrEqual(32);
      expect(c).toMatch(/^verylongprojectnamehere_[a-z0-9]+_bot$/);
    }
    expect(long.body.candidates[0]).toBe('verylongprojectnamehere_seni_bot');
    expect(new Set(long.body.candidates).size).toBe(5);
  });
});

describe('activity and runtime', () => {
  let id: number;
  let projectId: number;
  beforeAll(async () => {
    id = (await add({ label: 'Busy' })).body.id;
    projectId = (await api(t.app, 'GET', '/api/crm/projects/crew', { token: owner.token })).body.id;
  });

  it('activity: feed types only, merged with daily token snapshots, newest first, at most 50', async () => {
    /** `ms` ago, but never before today's UTC midnight: "today" is the UTC day, and CI may run at 00:01. */
    const todayAgo = (ms: number) => {
      const midnight = new Date();
      midnight.setUTCHours(0, 0, 0, 0);
      return new Date(Math.max(Date.now() - ms, midnight.getTime()));
    };
    const mk = (type: string, minsAgo: number) => ({
      type,
      project_id: projectId,
      worker_id: id,
      user_id: owner.id,
      title: type,
      detail: 'd',
      created_at: new Date(Date.now() - minsAgo * 60_000),
    });
    await t.db
      .insertInto('activity_log')
      .values([mk('git_commit', 5), mk('issue_pick', 10), mk('browser_chat_message', 1)])
      .execute();
    await t.db
      .insertInto('activity_log')
      .values(Array.from({ length: 60 }, (_, i) => mk('issue_log', 100 + i)))
      .execute();
    await t.db
      .insertInto('token_usage')
      .values([
        {
          user_id: owner.id,
          project_id: projectId,
          project_name: 'crew',
          worker_id: id,
          model: 'm',
          input_tokens: 100,
          output_tokens: 50,
          total_tokens: 150,
          created_at: todayAgo(2 * 60_000),
        },
        {
          user_id: owner.id,
          project_id: projectId,
          project_name: 'crew',
          worker_id: id,
          model: 'm',
          input_tokens: 0,
          output_tokens: 0,
          total_tokens: 1000,
          created_at: todayAgo(90_000),
        },
      ])
      .execute();
    const res = await api(t.app, 'GET', `${B}/${id}/activity`, { token: owner.token });
    expect(res.body.events).toHaveLength(50);
    expect(res.body.events[0]).toMatchObject({ type: 'token_budget', title: expect.stringContaining('1,150 tokens') });
    expect(res.body.events.slice(1, 3).map((e: any) => e.type)).toEqual(['git_commit', 'issue_pick']);
    expect(res.body.events.some((e: any) => e.type === 'browser_chat_message')).toBe(false);
  });

  it('runtime: tokens today against the plan cap; the crash rule', async () => {
    const r = await api(t.app, 'GET', `${B}/${id}/runtime`, { token: owner.token });
    expect(r.body).toEqual({
      status: 'idle',
      status_started_at: null,
      current_skill: null,
      tokens_today: 1150,
      tokens_pct: 0.1,
      tokens_cap: 1_000_000,
    });
    const set = (minsAgo: number, seenAgoS: number | null) =>
      t.db
        .updateTable('workers')
        .set({
          status: 'working',
          current_skill: 'tdd',
          status_started_at: new Date(Date.now() - minsAgo * 60_000),
          session_seen_at: seenAgoS === null ? null : new Date(Date.now() - seenAgoS * 1000),
        })
        .where('id', '=', id)
        .execute();
    await set(11, null);
    expect((await api(t.app, 'GET', `${B}/${id}/runtime`, { token: owner.token })).body).toMatchObject({
      status: 'idle',
      current_skill: null,
    });
    await set(11, 5);
    expect((await api(t.app, 'GET', `${B}/${id}/runtime`, { token: owner.token })).body).toMatchObject({
      status: 'working',
      current_skill: 'tdd',
    });
    await set(3, null);
    expect((await api(t.app, 'GET', `${B}/${id}/runtime`, { token: owner.token })).body.status).toBe('working');
    // An agent run of this worker with a fresh heartbeat is a live session too.
    await set(11, null);
    const w = await t.db.selectFrom('workers').select('project_id').where('id', '=', id).executeTakeFirstOrThrow();
    const msg = await t.db
      .insertInto('chat_messages')
      .values({ project_id: w.project_id, worker_id: id, role: 'user', content: 'x' } as any)
      .returning('id')
      .executeTakeFirstOrThrow();
    const run = await t.db
      .insertInto('agent_runs')
      .values({
        project_id: w.project_id,
        worker_id: id,
        message_id: msg.id,
        status: 'running',
        heartbeat_at: new Date(),
      } as any)
      .returning('id')
      .executeTakeFirstOrThrow();
    expect((await api(t.app, 'GET', `${B}/${id}/runtime`, { token: owner.token })).body.status).toBe('working');
    await t.db
      .updateTable('agent_runs')
      .set({ heartbeat_at: new Date(Date.now() - 5 * 60_000) })
      .where('id', '=', run.id)
      .execute();
    expect((await api(t.app, 'GET', `${B}/${id}/runtime`, { token: owner.token })).body.status).toBe('idle');
    await t.db.deleteFrom('agent_runs').where('id', '=', run.id).execute();
  });

  it('runtime caps by plan: free 100K, starter 400K, starter_cloud 2M, beta unmetered', async () => {
    for (const [plan, cap, pct] of [
      ['free', 100_000, 1.2],
      ['starter', 400_000, 0.3],
      ['starter_cloud', 2_000_000, 0.1],
      ['beta', null, 0],
    ] as const) {
      await t.db.updateTable('users').set({ plan }).where('id', '=', owner.id).execute();
      const r = await api(t.app, 'GET', `${B}/${id}/runtime`, { token: owner.token });
      expect(r.body, plan).toMatchObject({ tokens_cap: cap, tokens_pct: pct, tokens_today: 1150 });
    }
    await t.db.updateTable('users').set({ plan: 'min' }).where('id', '=', owner.id).execute();
    expect((await api(t.app, 'GET', `${B}/${id}/runtime`, { token: other.token })).status).toBe(403);
    expect((await api(t.app, 'GET', `${B}/999999/runtime`, { token: owner.token })).status).toBe(404);
  });
});

describe('presets and the agent runtime agree', () => {
  it('every preset tool names a tool or a tool group of the agent registry, and every preset role has a tier', async () => {
    const { WORKER_PRESETS } = await import('./presets.ts');
    const { createDefaultToolRegistry } = await import('../runtime/builtin-tools.ts');
    const { MODEL_TIERS } = await import('../models/model-tiers.ts');
    const tools = createDefaultToolRegistry().list();
    const known = new Set([...tools.map((x) => x.name), ...tools.map((x) => x.group)]);
    for (const p of WORKER_PRESETS) {
      for (const tool of p.tools) expect(known.has(tool), `${p.id}: ${tool}`).toBe(true);
      expect(
        MODEL_TIERS.tiers.some((x) => x.key === MODEL_TIERS.roleDefaults[p.id]),
        p.id,
      ).toBe(true);
      expect(
        MODEL_TIERS.tiers.some((x) => x.key === p.model),
        p.id,
      ).toBe(true);
    }
  });
});
