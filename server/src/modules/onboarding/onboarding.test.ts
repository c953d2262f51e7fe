import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { api, buildTestApp, createUser, multipartBody, type TestApp } from '../../../test/helpers.ts';

let t: TestApp;
let admin: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  t = await buildTestApp();
  admin = await createUser(t, { role: 'admin' });
});
afterAll(async () => {
  await t?.close();
});

const setup = (token: string, config: unknown, files: Array<{ filename: string; value: string }> = []) => {
  const mp = multipartBody([
    { name: 'config', value: typeof config === 'string' ? config : JSON.stringify(config) },
    ...files.map((f) => ({ name: 'files', filename: f.filename, value: f.value, contentType: 'text/plain' })),
  ]);
  return api(t.app, 'POST', '/api/crm/onboarding/setup', { token, payload: mp.payload, headers: mp.headers });
};
const events = async (userId: number, prefix = 'onboarding_') =>
  await t.db
    .selectFrom('activity_log')
    .select(['type', 'payload'])
    .where('user_id', '=', userId)
    .where('type', 'like', `${prefix}%`)
    .orderBy('id')
    .execute();

describe('auth and validation', () => {
  it('401 without a token on every route of the group', async () => {
    for (const [m, u] of [
      ['POST', '/api/crm/onboarding/setup'],
      ['GET', '/api/crm/account/trial-status'],
      ['GET', '/api/crm/account/usage'],
      ['GET', '/api/crm/onboarding/progress'],
      ['POST', '/api/crm/onboarding/event'],
      ['POST', '/api/crm/onboarding/dismiss'],
      ['POST', '/api/crm/onboarding/replay'],
      ['POST', '/api/crm/onboarding/reset'],
      ['GET', '/api/crm/onboarding/videos'],
      ['PUT', '/api/crm/onboarding/videos'],
    ] as const) {
      expect((await api(t.app, m, u)).status, `${m} ${u}`).toBe(401);
    }
  });
  it('400 for a bad setup config, a bad event, a bad videos body; 403 for a non-admin PUT', async () => {
    const u = await createUser(t);
    expect((await setup(u.token, '{not json')).status).toBe(400);
    const missing = await setup(u.token, { displayName: 'x' });
    expect(missing.status).toBe(400);
    expect(missing.body.details[0].path).toBe('config/projectName');
    const noConfig = multipartBody([{ name: 'other', value: 'x' }]);
    expect(
      (
        await api(t.app, 'POST', '/api/crm/onboarding/setup', {
          token: u.token,
          payload: noConfig.payload,
          headers: noConfig.headers,
        })
      ).status,
    ).toBe(400);
    expect(
      (await api(t.app, 'POST', '/api/crm/onboarding/setup', { token: u.token, body: { config: {} } })).status,
    ).toBe(400);
    expect(
      (
        await api(t.app, 'POST', '/api/crm/onboarding/event', {
          token: u.token,
          body: { step: 'dance', status: 'completed' },
        })
      ).body.error,
    ).toBe('unknown_step');
    expect(
      (await api(t.app, 'POST', '/api/crm/onboarding/event', { token: u.token, body: { step: 'cli', status: 'done' } }))
        .body.error,
    ).toBe('unknown_status');
    expect(
      (await api(t.app, 'POST', '/api/crm/onboarding/event', { token: u.token, body: { step: 'cli' } })).status,
    ).toBe(400);
    expect(
      (await api(t.app, 'PUT', '/api/crm/onboarding/videos', { token: admin.token, body: { videos: 'x' } })).status,
    ).toBe(400);
    expect(
      (await api(t.app, 'PUT', '/api/crm/onboarding/videos', { token: u.token, body: { videos: {} } })).status,
    ).toBe(403);
    // The service keeps the admin rule too (any other caller of it, not only the route).
    const user = { id: u.id, email: u.email, role: 'user', isAdmin: false } as Parameters<
      typeof t.services.onboarding.putVideos
    >[0];
    await expect(
      t.services.onboarding.putVideos(user, { overview: { url: 'https://evil.example/x' } }),
    ).rejects.toMatchObject({ statusCode: 403, code: 'admin_required' });
    expect(
      await t.db.selectFrom('onboarding_progress').select('user_id').where('user_id', '=', u.id).execute(),
    ).toHaveLength(0);
  });
});

describe('setup and trial', () => {
  it('empty llmKey + verified e-mail + no prior trial: trial project with 100K tokens, platform key, files in the project directory', async () => {
    const u = await createUser(t, { email_verified: true });
    const res = await setup(
      u.token,
      { displayName: 'Bakery', projectName: 'bakery', niche: 'online shop', teamPreset: 'ecommerce', llmKey: '' },
      [
        { filename: 'brief.md', value: '# Brief' },
        { filename: '../../escape me.txt', value: 'x' },
      ],
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      ok: true,
      trial_activated: true,
      project: { name: 'bakery', trial_mode: true, uses_platform_key: true, worker_count: 4 },
      files: ['brief.md', 'escape_me.txt'],
    });
    const dir = t.deps.access.projectDir(res.body.project.id);
    expect(fs.readFileSync(path.join(dir, 'brief.md'), 'utf8')).toBe('# Brief');
    expect(fs.existsSync(path.join(dir, 'escape_me.txt'))).toBe(true);
    expect(fs.existsSync(path.join(t.dataDir, 'escape me.txt'))).toBe(false);
    expect(fs.readdirSync(path.join(t.dataDir, 'tmp'))).toEqual([]);
    const ts = await api(t.app, 'GET', '/api/crm/account/trial-status', { token: u.token });
    expect(ts.body).toMatchObject({
      email: u.email,
      email_verified: true,
      trial_granted: true,
      has_trial_active: true,
      total_remaining: 100_000,
      total_granted: 100_000,
      projects: [{ name: 'bakery', trial_mode: true, tokens_used: 0 }],
    });
    await t.db
      .insertInto('token_usage')
      .values({
        user_id: u.id,
        project_id: res.body.project.id,
        project_name: 'bakery',
        worker_id: res.body.workers[0].id,
        model: 'm',
        key_source: 'trial',
        input_tokens: 30_000,
        output_tokens: 10_000,
        total_tokens: 40_000,
      })
      .execute();
    expect((await api(t.app, 'GET', '/api/crm/account/trial-status', { token: u.token })).body).toMatchObject({
      total_remaining: 60_000,
      has_trial_active: true,
    });
    const ev = await t.db
      .selectFrom('activity_log')
      .select('type')
      .where('project_id', '=', res.body.project.id)
      .execute();
    expect(ev.filter((e) => e.type === 'project_created')).toHaveLength(1);
    expect(ev.filter((e) => e.type === 'worker_created')).toHaveLength(4);
  });

  it('no trial with an unverified e-mail, with an own key (stored sealed), or a second time', async () => {
    const unverified = await createUser(t, { email_verified: false });
    const a = await setup(unverified.token, { displayName: 'A', projectName: 'a' });
    expect(a.body).toMatchObject({ trial_activated: false, project: { trial_mode: false } });
    const keyed = await createUser(t);
    const b = await setup(keyed.token, { displayName: 'B', projectName: 'b', llmKey: 'sk-ant-own-key-0123456789' });
    expect(b.body).toMatchObject({ trial_activated: false, project: { trial_mode: false, uses_platform_key: false } });
    expect(b.text).not.toContain('sk-ant-own-key');
    expect((await api(t.app, 'GET', '/api/crm/account/settings', { token: keyed.token })).body.llm_key_set).toBe(true);
    const twice = await createUser(t, { plan: 'min' });
    expect((await setup(twice.token, { displayName: 'C', projectName: 'c1' })).body.trial_activated).toBe(true);
    expect((await setup(twice.token, { displayName: 'C', projectName: 'c2' })).body.trial_activated).toBe(false);
    const again = await api(t.app, 'POST', '/api/crm/projects/create', {
      token: twice.token,
      body: { displayName: 'D', projectName: 'd' },
    });
    expect(again.body.project).toMatchObject({ trial_mode: true, uses_platform_key: true });
    const st = await api(t.app, 'GET', '/api/crm/account/trial-status', { token: unverified.token });
    expect(st.body).toMatchObject({
      trial_granted: false,
      has_trial_active: false,
      total_remaining: 0,
      total_granted: 0,
      projects: [],
    });
  });

  it('402 at the project limit; explicit workers; an invalid worker leaves nothing behind', async () => {
    const u = await createUser(t);
    const bad = await setup(
      u.token,
      { displayName: 'W', projectName: 'w', workers: [{ label: 'ok' }, { preset: 'nope' }] },
      [{ filename: 'a.txt', value: 'a' }],
    );
    expect(bad.status).toBe(400);
    expect(await t.db.selectFrom('projects').select('id').where('owner_id', '=', u.id).execute()).toHaveLength(0);
    expect(await t.db.selectFrom('trials').select('user_id').where('user_id', '=', u.id).execute()).toHaveLength(0);
    const ok = await setup(u.token, {
      displayName: 'W',
      projectName: 'w',
      workers: [{ label: 'Solo', preset: 'developer' }],
    });
    expect(ok.body.workers.map((w: any) => w.label)).toEqual(['Solo']);
    const res = await setup(u.token, { displayName: 'W2', projectName: 'w2' });
    expect(res.status).toBe(402);
    expect(res.body).toMatchObject({
      error: 'plan_limit_reached',
      reason: 'projects_limit',
      current: 1,
      limit: 1,
      plan: 'free',
    });
  });
});

describe('usage', () => {
  it('the caller’s rows (up to 200, newest first) and totals', async () => {
    const u = await createUser(t);
    const other = await createUser(t);
    await t.db
      .insertInto('token_usage')
      .values([
        ...Array.from({ length: 205 }, (_, i) => ({
          user_id: u.id,
          project_name: 'p',
          worker_id: 1,
          model: 'm',
          input_tokens: 2,
          output_tokens: 1,
          cache_tokens: 0,
          total_tokens: 3,
          created_at: new Date(Date.now() - i * 1000),
        })),
        { user_id: other.id, project_name: 'q', input_tokens: 100, output_tokens: 100, total_tokens: 200 },
      ])
      .execute();
    const res = await api(t.app, 'GET', '/api/crm/account/usage', { token: u.token });
    expect(res.body.rows).toHaveLength(200);
    expect(res.body.rows[0]).toMatchObject({
      project_name: 'p',
      worker_id: 1,
      input_tokens: 2,
      output_tokens: 1,
      cache_tokens: 0,
      total_tokens: 3,
      estimated: false,
    });
    expect(res.body.totals).toEqual({ total: 615, input: 410, output: 205 });
  });
});

describe('checklist', () => {
  it('untouched: zeros and nulls, no record', async () => {
    const u = await createUser(t);
    const res = await api(t.app, 'GET', '/api/crm/onboarding/progress', { token: u.token });
    expect(res.body).toEqual({
      steps: ['workers', 'cli', 'skill', 'bot', 'issue'],
      state: {},
      completed_count: 0,
      total_steps: 5,
      completed_at: null,
      dismissed_at: null,
      source: null,
      started_at: null,
      updated_at: null,
    });
    expect(
      await t.db.selectFrom('onboarding_progress').select('user_id').where('user_id', '=', u.id).execute(),
    ).toHaveLength(0);
  });

  it('events: changes only, completion at 5 of 5 with duration_ms', async () => {
    const u = await createUser(t);
    const ev = (step: string, status = 'completed', source?: string) =>
      api(t.app, 'POST', '/api/crm/onboarding/event', { token: u.token, body: { step, status, source } });
    const first = await ev('workers');
    expect(first.body).toMatchObject({
      state: { workers: 'completed' },
      completed_count: 1,
      source: 'web',
      completed_at: null,
    });
    await ev('workers');
    await ev('cli', 'skipped', 'cli');
    await ev('cli', 'completed', 'cli');
    for (const s of ['skill', 'bot']) await ev(s);
    const last = await ev('issue');
    expect(last.body.completed_count).toBe(5);
    expect(last.body.completed_at).not.toBeNull();
    await ev('issue');
    const types = (await events(u.id)).map((e) => e.type);
    expect(types).toEqual([
      'onboarding_step_completed',
      'onboarding_step_skipped',
      'onboarding_step_completed',
      'onboarding_step_completed',
      'onboarding_step_completed',
      'onboarding_step_completed',
      'onboarding_completed',
    ]);
    const done = (await events(u.id)).find((e) => e.type === 'onboarding_completed')!;
    expect(done.payload.duration_ms).toEqual(expect.any(Number));
    expect(done.payload.duration_ms as number).toBeGreaterThanOrEqual(0);
  });

  it('ticks itself from what the user did: workers, a skill, an issue (events with source auto), once', async () => {
    const u = await createUser(t);
    const ok = await setup(u.token, {
      displayName: 'Ticks',
      projectName: 'ticks',
      workers: [{ label: 'Solo', preset: 'developer' }],
    });
    expect(ok.status).toBeLessThan(300);
    const progress = () => api(t.app, 'GET', '/api/crm/onboarding/progress', { token: u.token });
    expect((await progress()).body.state).toEqual({ workers: 'completed' });
    // A skipped step ticks too once it is done.
    await api(t.app, 'POST', '/api/crm/onboarding/event', {
      token: u.token,
      body: { step: 'issue', status: 'skipped' },
    });
    const issue = await api(t.app, 'POST', '/api/crm/projects/ticks/issues', { token: u.token, body: { title: 'x' } });
    expect(issue.status).toBe(201);
    const skill = await api(t.app, 'POST', '/api/crm/projects/ticks/skills', {
      token: u.token,
      body: { name: 'tone', description: 'Tone', content: 'Be brief.' },
    });
    expect(skill.status).toBeLessThan(300);
    const after = await progress();
    expect(after.body.state).toEqual({ workers: 'completed', issue: 'completed', skill: 'completed' });
    expect(after.body.completed_count).toBe(3);
    await progress();
    const auto = (await events(u.id)).filter((e) => e.payload.source === 'auto').map((e) => e.payload.step);
    expect(auto.sort()).toEqual(['issue', 'skill', 'workers']);
    // Another user's checklist is not ticked by it.
    const other = await createUser(t);
    expect((await api(t.app, 'GET', '/api/crm/onboarding/progress', { token: other.token })).body.state).toEqual({});
  });

  it('dismiss (first only writes an event with completed_count), replay clears, reset wipes', async () => {
    const u = await createUser(t);
    await t.db.updateTable('users').set({ heard_source: 'friend' }).where('id', '=', u.id).execute();
    await api(t.app, 'POST', '/api/crm/onboarding/event', {
      token: u.token,
      body: { step: 'bot', status: 'completed' },
    });
    const d1 = await api(t.app, 'POST', '/api/crm/onboarding/dismiss', { token: u.token });
    expect(d1.body.dismissed_at).not.toBeNull();
    const d2 = await api(t.app, 'POST', '/api/crm/onboarding/dismiss', { token: u.token });
    expect(d2.body.dismissed_at).toBe(d1.body.dismissed_at);
    const r = await api(t.app, 'POST', '/api/crm/onboarding/replay', { token: u.token });
    expect(r.body).toMatchObject({ dismissed_at: null, state: { bot: 'completed' }, completed_count: 1 });
    await api(t.app, 'POST', '/api/crm/onboarding/replay', { token: u.token });
    const reset = await api(t.app, 'POST', '/api/crm/onboarding/reset', { token: u.token });
    expect(reset.body).toEqual({ ok: true });
    expect((await api(t.app, 'GET', '/api/crm/onboarding/progress', { token: u.token })).body.completed_count).toBe(0);
    expect(
      (await t.db.selectFrom('users').select('heard_source').where('id', '=', u.id).executeTakeFirstOrThrow())
        .heard_source,
    ).toBeNull();
    const evs = await events(u.id);
    expect(evs.map((e) => e.type)).toEqual([
      'onboarding_step_completed',
      'onboarding_dismissed',
      'onboarding_replayed',
      'onboarding_reset',
    ]);
    expect(evs[1].payload).toEqual({ completed_count: 1 });
  });

  it('dismiss, event, replay and reset racing each other never answer 500 (the row may vanish in between)', async () => {
    const u = await createUser(t);
    const call = (route: string, body?: unknown) =>
      api(t.app, 'POST', `/api/crm/onboarding/${route}`, { token: u.token, body });
    for (let round = 0; round < 10; round++) {
      const answers = await Promise.all([
        call('dismiss'),
        call('reset'),
        call('event', { step: 'cli', status: 'completed' }),
        call('replay'),
        call('dismiss'),
      ]);
      for (const a of answers) expect(a.status, a.text).toBeLessThan(500);
    }
  });

  it('videos: 8 slots over defaults; admin PUT stores known slots only, sanitized', async () => {
    const u = await createUser(t);
    const g = await api(t.app, 'GET', '/api/crm/onboarding/videos', { token: u.token });
    expect(Object.keys(g.body.videos)).toEqual([
      'overview',
      'plan',
      'workers',
      'issue',
      'bot',
      'cli',
      'notes',
      'bridge',
    ]);
    expect(g.body.videos.overview).toMatchObject({ url: null, seconds: 0 });
    const put = await api(t.app, 'PUT', '/api/crm/onboarding/videos', {
      token: admin.token,
      body: {
        videos: {
          overview: { url: 'https://videos.example.com/o.mp4', seconds: 95.7, title: '  Welcome   aboard  ' },
          bot: { url: 'javascript:alert(1)', seconds: -5, title: 'x'.repeat(500) },
          hacker: { url: 'https://evil.example' },
        },
      },
    });
    expect(put.body.ok).toBe(true);
    expect(put.body.videos.overview).toEqual({
      url: 'https://videos.example.com/o.mp4',
      seconds: 95,
      title: 'Welcome aboard',
    });
    expect(put.body.videos.bot).toEqual({ url: null, seconds: 0, title: 'x'.repeat(120) });
    expect(put.body.videos.hacker).toBeUndefined();
    expect((await t.db.selectFrom('onboarding_videos').select('slot').execute()).map((r) => r.slot).sort()).toEqual([
      'bot',
      'overview',
    ]);
    expect((await api(t.app, 'GET', '/api/crm/onboarding/videos', { token: u.token })).body.videos.overview.title).toBe(
      'Welcome aboard',
    );
    expect((await events(admin.id)).at(-1)).toEqual({
      type: 'onboarding_videos_updated',
      payload: { slots: ['overview', 'bot'] },
    });
  });
});
