import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { api, buildTestApp, createUser, IMAGES, multipartBody, type TestApp } from '../../../test/helpers.ts';
import { startMessengerStandIn } from '../../../test/standins/messenger.ts';

const BOT_TOKEN = '123456789:AAFakeTokenForTheStandInBot_0001';
const BOT_TOKEN_2 = '223456789:AAFakeTokenForTheStandInBot_0002';
let t: TestApp;
let bot: Awaited<ReturnType<typeof startMessengerStandIn>>;
let admin: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  bot = await startMessengerStandIn({
    [BOT_TOKEN]: { id: 9001, username: 'acme_dev_bot' },
    [BOT_TOKEN_2]: { id: 9002, username: 'acme_qa_bot' },
  });
  t = await buildTestApp({ env: { MESSENGER_API_URL: bot.url } });
  admin = await createUser(t, { role: 'admin' });
});
afterAll(async () => {
  await t?.close();
  await bot?.close();
});

const projectDirs = () =>
  fs.existsSync(path.join(t.dataDir, 'projects')) ? fs.readdirSync(path.join(t.dataDir, 'projects')).length : 0;
const projectRows = async (ownerId: number) =>
  (await t.db.selectFrom('projects').select('id').where('owner_id', '=', ownerId).execute()).length;
const create = (token: string, body: unknown) => api(t.app, 'POST', '/api/crm/projects/create', { token, body });

describe('authentication and validation', () => {
  it('401 without a token on every group', async () => {
    for (const [m, u] of [
      ['GET', '/api/crm/projects'],
      ['POST', '/api/crm/projects/create'],
      ['POST', '/api/crm/projects/create-with-team'],
      ['GET', '/api/crm/projects/x/config'],
      ['GET', '/api/crm/projects/x/logs'],
      ['POST', '/api/crm/projects/x/active-issue'],
      ['GET', '/api/crm/projects/suggest-preset?niche=a'],
    ] as const) {
      const res = await api(t.app, m, u);
      expect(res.status, `${m} ${u}`).toBe(401);
      expect(res.body.error).toBe('unauthorized');
    }
  });

  it('400 for a bad body: missing displayName, bad slug, unknown field, unknown team preset', async () => {
    const u = await createUser(t);
    expect((await create(u.token, { projectName: 'abc' })).status).toBe(400);
    const slug = await create(u.token, { displayName: 'A', projectName: 'Bad Name!' });
    expect(slug.status).toBe(400);
    expect(slug.body.error).toBe('invalid_project_name');
    expect((await create(u.token, { displayName: 'A' })).body.error).toBe('invalid_project_name');
    expect((await create(u.token, { displayName: 'A', projectName: 'ok', extra: 1 })).status).toBe(400);
    expect((await create(u.token, { displayName: 'A', projectName: 'ok', teamPreset: 'nope' })).body.error).toBe(
      'unknown_team_preset',
    );
    expect(await projectRows(u.id)).toBe(0);
  });
});

describe('creation', () => {
  it('creates with the first body shape and its team preset: workers, directory, events', async () => {
    const u = await createUser(t);
    const res = await create(u.token, {
      displayName: 'Acme Shop',
      projectName: 'acme-shop',
      niche: 'online store',
      teamPreset: 'ecommerce',
    });
    expect(res.status).toBe(201);
    expect(res.body.project).toMatchObject({
      name: 'acme-shop',
      display_name: 'Acme Shop',
      niche: 'online store',
      team_preset: 'ecommerce',
      config: { modelMode: 'strict' },
      trial_mode: false,
      worker_count: 4,
    });
    expect(res.body.workers.map((w: any) => w.role)).toEqual(['developer', 'copywriter', 'seo', 'support']);
    expect(res.body.workers[0].max_turns).toBe(40);
    expect(fs.existsSync(t.deps.access.projectDir(res.body.project.id))).toBe(true);
    const events = await t.db
      .selectFrom('activity_log')
      .select(['type', 'payload'])
      .where('project_id', '=', res.body.project.id)
      .orderBy('id')
      .execute();
    expect(events.map((e) => e.type)).toEqual([
      'project_created',
      'worker_created',
      'worker_created',
      'worker_created',
      'worker_created',
    ]);
    const list = await api(t.app, 'GET', '/api/crm/projects', { token: u.token });
    expect(list.body.projects.map((p: any) => p.name)).toEqual(['acme-shop']);
    const one = await api(t.app, 'GET', '/api/crm/projects/acme-shop', { token: u.token });
    expect(one.body.worker_count).toBe(4);
  });

  it('creates with the second body shape (technical_name, description, icon, color)', async () => {
    const u = await createUser(t);
    const res = await create(u.token, {
      technical_name: 'my_lab',
      displayName: 'My Lab',
      description: 'Research',
      icon: '🔬',
      color: '#336699',
    });
    expect(res.status).toBe(201);
    expect(res.body.project).toMatchObject({
      name: 'my_lab',
      description: 'Research',
      icon: '🔬',
      color: '#336699',
      worker_count: 0,
    });
  });

  it('the technical name is unique across the service: a taken name answers 409 project_exists', async () => {
    const a = await createUser(t, { plan: 'min' });
    const b = await createUser(t);
    expect((await create(a.token, { displayName: 'X', projectName: 'same' })).status).toBe(201);
    const dup = await create(a.token, { displayName: 'X', projectName: 'same' });
    expect(dup.status).toBe(409);
    expect(dup.body.error).toBe('project_exists');
    const other = await create(b.token, { displayName: 'X', projectName: 'same' });
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ error: 'project_exists', name: 'same' });
    const team = await api(t.app, 'POST', '/api/crm/projects/create-with-team', {
      token: b.token,
      body: { project: { displayName: 'X', projectName: 'same' }, workers: [{ label: 'w' }] },
    });
    expect(team.status).toBe(409);
    expect(team.body.error).toBe('project_exists');
    expect(await projectRows(b.id)).toBe(0);
    // The name names a's project, for b (403) and for an admin (that project).
    expect((await api(t.app, 'GET', '/api/crm/projects/same', { token: b.token })).status).toBe(403);
    const seen = await api(t.app, 'GET', '/api/crm/projects/same', { token: admin.token });
    expect(seen.status).toBe(200);
    expect(seen.body.owner_id).toBe(a.id);
  });
});

describe('access', () => {
  it("403 on another user's project, 404 on a missing one, admins may act", async () => {
    const owner = await createUser(t);
    const other = await createUser(t);
    await create(owner.token, { displayName: 'Private', projectName: 'private-one' });
    for (const u of [
      '/api/crm/projects/private-one',
      '/api/crm/projects/private-one/config',
      '/api/crm/projects/private-one/protocol',
      '/api/crm/projects/private-one/logs',
      '/api/crm/projects/private-one/metrics',
      '/api/crm/projects/private-one/active-issue',
    ]) {
      const res = await api(t.app, 'GET', u, { token: other.token });
      expect(res.status, u).toBe(403);
      expect(res.body.error).toBe('forbidden');
    }
    expect(
      (
        await api(t.app, 'PUT', '/api/crm/projects/private-one/protocol', {
          token: other.token,
          body: { protocol: 'x' },
        })
      ).status,
    ).toBe(403);
    expect((await api(t.app, 'GET', '/api/crm/projects/nothing-here', { token: other.token })).status).toBe(404);
    expect((await api(t.app, 'GET', '/api/crm/projects/private-one', { token: admin.token })).status).toBe(200);
  });
});

describe('plan limits', () => {
  it('free: 1 project; the second is 402 with the plan_limit_reached body', async () => {
    const u = await createUser(t, { plan: 'free' });
    expect((await create(u.token, { displayName: 'One', projectName: 'one' })).status).toBe(201);
    const res = await create(u.token, { displayName: 'Two', projectName: 'two' });
    expect(res.status).toBe(402);
    expect(res.body).toEqual({
      error: 'plan_limit_reached',
      reason: 'projects_limit',
      current: 1,
      limit: 1,
      plan: 'free',
      message: expect.any(String),
    });
    expect(await projectRows(u.id)).toBe(1);
  });

  it('free: 5 workers allowed, 6 refused (402 workers_limit) and nothing is left behind', async () => {
    const u = await createUser(t);
    const before = projectDirs();
    const six = Array.from({ length: 6 }, (_, i) => ({ label: `W${i}` }));
    const res = await api(t.app, 'POST', '/api/crm/projects/create-with-team', {
      token: u.token,
      body: { project: { displayName: 'Big', projectName: 'big' }, workers: six },
    });
    expect(res.status).toBe(402);
    expect(res.body).toMatchObject({
      error: 'plan_limit_reached',
      reason: 'workers_limit',
      current: 0,
      limit: 5,
      plan: 'free',
    });
    expect(await projectRows(u.id)).toBe(0);
    expect(projectDirs()).toBe(before);
    const five = await api(t.app, 'POST', '/api/crm/projects/create-with-team', {
      token: u.token,
      body: { project: { displayName: 'Big', projectName: 'big' }, workers: six.slice(0, 5) },
    });
    expect(five.status).toBe(201);
    expect(five.body.workers).toHaveLength(5);
  });

  it('min: 5 projects, the sixth is 402; max: 20', async () => {
    const u = await createUser(t, { plan: 'min' });
    for (let i = 0; i < 5; i++)
      expect((await create(u.token, { displayName: 'P', projectName: `m${i}` })).status).toBe(201);
    const res = await create(u.token, { displayName: 'P', projectName: 'm5' });
    expect(res.status).toBe(402);
    expect(res.body).toMatchObject({ reason: 'projects_limit', current: 5, limit: 5, plan: 'min' });
    const mx = await createUser(t, { plan: 'max' });
    await t.db
      .insertInto('projects')
      .values(Array.from({ length: 19 }, (_, i) => ({ owner_id: mx.id, name: `x${i}`, display_name: 'x' })))
      .execute();
    expect((await create(mx.token, { displayName: 'P', projectName: 'x19' })).status).toBe(201);
    expect((await create(mx.token, { displayName: 'P', projectName: 'x20' })).body).toMatchObject({
      reason: 'projects_limit',
      limit: 20,
      plan: 'max',
    });
  });

  it('beta owners and admins bypass the limits', async () => {
    const beta = await createUser(t, { plan: 'beta' });
    const adm = await createUser(t, { role: 'admin', plan: 'free' });
    for (const [i, u] of [beta, adm].entries()) {
      expect((await create(u.token, { displayName: 'A', projectName: `a${i}` })).status).toBe(201);
      expect((await create(u.token, { displayName: 'B', projectName: `b${i}`, teamPreset: 'software' })).status).toBe(
        201,
      );
    }
  });

  it('two concurrent creations at the limit: exactly one succeeds', async () => {
    const u = await createUser(t);
    const results = await Promise.all([
      create(u.token, { displayName: 'A', projectName: 'race-a' }),
      create(u.token, { displayName: 'B', projectName: 'race-b' }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 402]);
    expect(await projectRows(u.id)).toBe(1);
  });
});

describe('create-with-team', () => {
  it('binds the messenger token to the first worker (sealed, never answered)', async () => {
    const u = await createUser(t);
    const res = await api(t.app, 'POST', '/api/crm/projects/create-with-team', {
      token: u.token,
      body: {
        project: { displayName: 'Team', projectName: 'team' },
        workers: [{ preset: 'support' }, { label: 'Helper', model: 'fast' }],
        telegram: { token: BOT_TOKEN },
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.bot_username).toBe('acme_dev_bot');
    expect(res.body.workers[1].model).toBe('claude-haiku-4-5');
    expect(res.text).not.toContain(BOT_TOKEN);
    const row = await t.db
      .selectFrom('workers')
      .select(['messenger_token_enc', 'messenger_bot_id'])
      .where('id', '=', res.body.workers[0].id)
      .executeTakeFirstOrThrow();
    expect(row.messenger_token_enc).not.toContain(BOT_TOKEN.split(':')[1]);
    expect(t.deps.sealer.open(row.messenger_token_enc!)).toBe(BOT_TOKEN);
    expect(bot.calls.some((c) => c.method === 'getMe' && c.token === BOT_TOKEN)).toBe(true);
  });

  it('rolls back on an invalid worker, a token the messenger rejects, or a bot bound elsewhere', async () => {
    const u = await createUser(t, { plan: 'min' });
    const before = projectDirs();
    const bad = await api(t.app, 'POST', '/api/crm/projects/create-with-team', {
      token: u.token,
      body: { project: { displayName: 'R', projectName: 'r1' }, workers: [{ label: 'ok' }, { preset: 'no-such' }] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('unknown_preset');
    const escaping = await api(t.app, 'POST', '/api/crm/projects/create-with-team', {
      token: u.token,
      body: { project: { displayName: 'R', projectName: 'r1' }, workers: [{ label: 'ok', focus_dirs: ['../etc'] }] },
    });
    expect(escaping.body.error).toBe('invalid_worker');
    const rejected = await api(t.app, 'POST', '/api/crm/projects/create-with-team', {
      token: u.token,
      body: {
        project: { displayName: 'R', projectName: 'r1' },
        workers: [{ label: 'ok' }],
        telegram: { token: '999999:AAThisTokenIsNotKnownToTheBotApi' },
      },
    });
    expect(rejected.status).toBe(400);
    expect(rejected.body.error).toBe('invalid_bot_token');
    expect(rejected.text).not.toContain('AAThisTokenIsNotKnown');
    const bound = await api(t.app, 'POST', '/api/crm/projects/create-with-team', {
      token: u.token,
      body: {
        project: { displayName: 'R', projectName: 'r1' },
        workers: [{ label: 'ok' }],
        telegram: { token: BOT_TOKEN },
      },
    });
    expect(bound.status).toBe(409);
    expect(bound.body.error).toBe('bot_already_bound');
    expect(await projectRows(u.id)).toBe(0);
    expect(await t.db.selectFrom('activity_log').select('id').where('user_id', '=', u.id).execute()).toHaveLength(0);
    expect(projectDirs()).toBe(before);
  });
});

describe('settings, protocol, preset suggestion, logs, metrics', () => {
  let u: Awaited<ReturnType<typeof createUser>>;
  beforeAll(async () => {
    u = await createUser(t);
    await create(u.token, { displayName: 'Conf', projectName: 'conf', teamPreset: 'research' });
  });

  it('config: modelMode defaults to strict, PUT optimize, 400 on other values', async () => {
    expect((await api(t.app, 'GET', '/api/crm/projects/conf/config', { token: u.token })).body).toEqual({
      modelMode: 'strict',
      approvals: [],
    });
    expect(
      (await api(t.app, 'PUT', '/api/crm/projects/conf/config', { token: u.token, body: { modelMode: 'optimize' } }))
        .body,
    ).toEqual({ modelMode: 'optimize', approvals: [] });
    expect((await api(t.app, 'GET', '/api/crm/projects/conf/config', { token: u.token })).body).toEqual({
      modelMode: 'optimize',
      approvals: [],
    });
    expect(
      (await api(t.app, 'PUT', '/api/crm/projects/conf/config', { token: u.token, body: { modelMode: 'fast' } }))
        .status,
    ).toBe(400);
  });

  it('protocol: empty by default, replaced by PUT, 400 without text', async () => {
    expect((await api(t.app, 'GET', '/api/crm/projects/conf/protocol', { token: u.token })).body.protocol).toBe('');
    const put = await api(t.app, 'PUT', '/api/crm/projects/conf/protocol', {
      token: u.token,
      body: { protocol: '1. Always reference the issue.' },
    });
    expect(put.body.protocol).toBe('1. Always reference the issue.');
    expect((await api(t.app, 'GET', '/api/crm/projects/conf/protocol', { token: u.token })).body.protocol).toBe(
      '1. Always reference the issue.',
    );
    expect((await api(t.app, 'PUT', '/api/crm/projects/conf/protocol', { token: u.token, body: {} })).status).toBe(400);
  });

  it('suggest-preset maps keywords, falls back to the default, 400 without niche', async () => {
    const s = (n: string) =>
      api(t.app, 'GET', `/api/crm/projects/suggest-preset?niche=${encodeURIComponent(n)}`, { token: u.token });
    expect((await s('Handmade jewelry shop')).body).toEqual({ preset_id: 'ecommerce' });
    expect((await s('B2B SaaS for dentists')).body).toEqual({ preset_id: 'software' });
    expect((await s('podcast about cooking')).body).toEqual({ preset_id: 'content' });
    expect((await s('something else')).body).toEqual({ preset_id: 'startup' });
    expect((await api(t.app, 'GET', '/api/crm/projects/suggest-preset', { token: u.token })).status).toBe(400);
  });

  it('logs by category and metrics per day', async () => {
    const all = await api(t.app, 'GET', '/api/crm/projects/conf/logs', { token: u.token });
    expect(all.body.entries.map((e: any) => e.type)).toEqual(['project_created', 'worker_created', 'worker_created']);
    expect(all.body.lines[0]).toMatch(/^\d{4}-\d\d-\d\dT.* \[project_created\] /);
    const w = await api(t.app, 'GET', '/api/crm/projects/conf/logs?category=workers&lines=1', { token: u.token });
    expect(w.body.entries).toHaveLength(1);
    expect(w.body.entries[0].type).toBe('worker_created');
    expect((await api(t.app, 'GET', '/api/crm/projects/conf/logs?category=nope', { token: u.token })).status).toBe(400);
    expect((await api(t.app, 'GET', '/api/crm/projects/conf/logs?lines=0', { token: u.token })).status).toBe(400);
    const today = new Date().toISOString().slice(0, 10);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const m = await api(t.app, 'GET', `/api/crm/projects/conf/metrics?since=${yesterday}&until=${today}`, {
      token: u.token,
    });
    expect(m.status).toBe(200);
    expect(m.body.days.map((d: any) => d.date)).toEqual([yesterday, today]);
    expect(m.body.days[1]).toMatchObject({ events: 3, by_type: { project_created: 1, worker_created: 2 } });
    expect(m.body.totals.events).toBe(3);
    expect(
      (await api(t.app, 'GET', `/api/crm/projects/conf/metrics?since=${today}&until=${yesterday}`, { token: u.token }))
        .body.error,
    ).toBe('invalid_range');
    expect((await api(t.app, 'GET', '/api/crm/projects/conf/metrics?since=garbage', { token: u.token })).status).toBe(
      400,
    );
  });
});

describe('project icon upload', () => {
  let u: Awaited<ReturnType<typeof createUser>>;
  beforeAll(async () => {
    u = await createUser(t);
    await create(u.token, { displayName: 'Icon', projectName: 'iconic' });
  });
  const upload = (buf: Buffer, filename = 'i.png', token = u.token) => {
    const mp = multipartBody([{ name: 'file', value: buf, filename, contentType: 'image/png' }]);
    return api(t.app, 'POST', '/api/crm/projects/iconic/upload-icon', {
      token,
      payload: mp.payload,
      headers: mp.headers,
    });
  };

  it('accepts PNG and GIF by content and serves it back', async () => {
    const res = await upload(IMAGES.png);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, url: '/api/crm/projects/iconic/icon' });
    const g = await upload(IMAGES.gif, 'x.gif');
    expect(g.status).toBe(200);
    const icon = await api(t.app, 'GET', '/api/crm/projects/iconic/icon', { token: u.token });
    expect(icon.headers['content-type']).toBe('image/gif');
    expect((await api(t.app, 'GET', '/api/crm/projects/iconic', { token: u.token })).body.has_icon).toBe(true);
  });

  it('refuses wrong magic bytes (a JPEG, text named .png), oversize, a missing file, a non-multipart body, other users', async () => {
    expect((await upload(IMAGES.jpeg)).body.error).toBe('invalid_image');
    expect((await upload(Buffer.from('not an image at all'))).body.error).toBe('invalid_image');
    const big = await upload(Buffer.concat([IMAGES.png, Buffer.alloc(2 * 1024 * 1024 + 10)]));
    expect(big.status).toBe(413);
    expect(big.body.error).toBe('payload_too_large');
    const mp = multipartBody([{ name: 'other', value: 'x' }]);
    expect(
      (
        await api(t.app, 'POST', '/api/crm/projects/iconic/upload-icon', {
          token: u.token,
          payload: mp.payload,
          headers: mp.headers,
        })
      ).body.error,
    ).toBe('missing_file');
    expect(
      (await api(t.app, 'POST', '/api/crm/projects/iconic/upload-icon', { token: u.token, body: { file: 'x' } }))
        .status,
    ).toBe(400);
    const other = await createUser(t);
    expect((await upload(IMAGES.png, 'i.png', other.token)).status).toBe(403);
  });
});

describe('active issue', () => {
  it('binds, reads the latest within 7 days, writes session_active_issue; nulls when stale; 400 bad body', async () => {
    const u = await createUser(t);
    const p = await create(u.token, { displayName: 'AI', projectName: 'ai' });
    expect((await api(t.app, 'GET', '/api/crm/projects/ai/active-issue', { token: u.token })).body).toEqual({
      active_issue_id: null,
      title: null,
      ts: null,
    });
    const bind = await api(t.app, 'POST', '/api/crm/projects/ai/active-issue', {
      token: u.token,
      body: { issue_id: 12, title: 'Fix login' },
    });
    expect(bind.status).toBe(200);
    await api(t.app, 'POST', '/api/crm/projects/ai/active-issue', { token: u.token, body: { issue_id: 13 } });
    const got = await api(t.app, 'GET', '/api/crm/projects/ai/active-issue', { token: u.token });
    expect(got.body).toMatchObject({ active_issue_id: 13, title: null });
    const ev = await t.db
      .selectFrom('activity_log')
      .select(['payload'])
      .where('project_id', '=', p.body.project.id)
      .where('type', '=', 'session_active_issue')
      .orderBy('id')
      .execute();
    expect(ev.map((e) => e.payload)).toEqual([
      { issue_id: 12, title: 'Fix login', source: 'web' },
      { issue_id: 13, title: null, source: 'web' },
    ]);
    await t.db
      .updateTable('active_issue_bindings')
      .set({ created_at: new Date(Date.now() - 8 * 86_400_000) })
      .where('project_id', '=', p.body.project.id)
      .execute();
    expect(
      (await api(t.app, 'GET', '/api/crm/projects/ai/active-issue', { token: u.token })).body.active_issue_id,
    ).toBeNull();
    expect(
      (await api(t.app, 'POST', '/api/crm/projects/ai/active-issue', { token: u.token, body: { issue_id: 'x' } }))
        .status,
    ).toBe(400);
  });
});
