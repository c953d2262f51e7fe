import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, buildTestApp, createProject, createUser, type TestApp } from '../../../test/helpers.ts';
import { createWorker } from '../../../test/runtime-fixtures.ts';

let t: TestApp;
let admin: Awaited<ReturnType<typeof createUser>>;
let user: Awaited<ReturnType<typeof createUser>>;
const H = 3_600_000;
const D = 24 * H;
const at = (ms: number) => new Date(Date.now() - ms);

beforeAll(async () => {
  t = await buildTestApp();
  admin = await createUser(t, { role: 'admin' });
  user = await createUser(t);
  // Outside every window: only the users each test makes are in its cohorts.
  await t.db
    .updateTable('users')
    .set({ created_at: at(400 * D) })
    .where('id', 'in', [admin.id, user.id])
    .execute();
});
afterAll(async () => {
  await t?.close();
});

const get = (path: string, token = admin.token) => api(t.app, 'GET', path, { token });

describe('admin analytics access and windows', () => {
  it('answers 401 without a token, 403 to a user, 400 outside a refused window', async () => {
    const paths = [
      '/api/crm/analytics/onboarding-funnel',
      '/api/crm/analytics/lifecycle-funnel',
      '/api/crm/analytics/wizard-metrics',
      '/api/crm/analytics/activity',
      '/api/crm/analytics/sidebar',
      '/api/crm/analytics/phases',
      '/api/crm/admin/wipe-metrics',
      '/api/crm/admin/dashboard',
    ];
    for (const p of paths) {
      expect((await api(t.app, 'GET', p)).status).toBe(401);
      const r = await get(p, user.token);
      expect(r.status).toBe(403);
      expect((await get(p)).status).toBe(200);
    }
    for (const [p, bad, good] of [
      ['/api/crm/analytics/onboarding-funnel?hours=', [0, 721, -1], 720],
      ['/api/crm/analytics/lifecycle-funnel?days=', [0, 366], 365],
      ['/api/crm/analytics/activity?days=', [0, 91], 90],
      ['/api/crm/analytics/phases?hours=', [0, 721], 720],
      ['/api/crm/admin/wipe-metrics?days=', [0, 91], 90],
    ] as const) {
      for (const b of bad) expect((await get(`${p}${b}`)).body.error).toBe('invalid_request');
      expect((await get(`${p}${good}`)).status).toBe(200);
    }
    // The wizard window is clamped, not refused.
    expect((await get('/api/crm/analytics/wizard-metrics?hours=0')).body.hours).toBe(1);
    expect((await get('/api/crm/analytics/wizard-metrics?hours=99999')).body.hours).toBe(720);
    expect((await get('/api/crm/analytics/wizard-metrics')).body.hours).toBe(168);
  });
});

describe('onboarding funnel', () => {
  it('computes counts, rates and nearest-rank percentiles from known progress', async () => {
    const us = await Promise.all([1, 2, 3, 4, 5].map(() => createUser(t)));
    const all = { workers: 'completed', cli: 'completed', skill: 'completed', bot: 'completed', issue: 'completed' };
    const started = at(10 * H);
    const plus = (ms: number) => new Date(started.getTime() + ms);
    const rows = [
      { user_id: us[0].id, state: all, started_at: started, completed_at: plus(1000) },
      { user_id: us[1].id, state: { ...all, bot: 'skipped' }, started_at: started, completed_at: plus(3000) },
      { user_id: us[2].id, state: { workers: 'completed' }, started_at: started, completed_at: null },
      { user_id: us[3].id, state: {}, started_at: started, completed_at: null },
      { user_id: us[4].id, state: all, started_at: at(200 * H), completed_at: at(199 * H) },
    ];
    for (const r of rows)
      await t.db
        .insertInto('onboarding_progress')
        .values({ ...r, state: JSON.stringify(r.state), source: 'web' })
        .execute();
    for (const [i, ms] of [
      [0, 500],
      [1, 1500],
      [2, 2500],
    ] as const)
      await t.db
        .insertInto('activity_log')
        .values({ type: 'onboarding_step_completed', user_id: us[i].id, created_at: plus(ms) })
        .execute();

    const r = await get('/api/crm/analytics/onboarding-funnel');
    expect(r.body).toEqual({
      hours: 168,
      total_steps: 5,
      started_users: 4,
      completed_users: 2,
      completion_rate: 0.5,
      per_step: [
        { step: 'workers', completed: 3, skipped: 0 },
        { step: 'cli', completed: 2, skipped: 0 },
        { step: 'skill', completed: 2, skipped: 0 },
        { step: 'bot', completed: 1, skipped: 1 },
        { step: 'issue', completed: 2, skipped: 0 },
      ],
      duration_p50_ms: 1000,
      duration_p90_ms: 3000,
      ttfc_p50_ms: 1500,
      ttfc_sample_size: 3,
    });
    const wide = await get('/api/crm/analytics/onboarding-funnel?hours=720');
    expect(wide.body).toMatchObject({ hours: 720, started_users: 5, completed_users: 3, completion_rate: 0.6 });
    await t.db.deleteFrom('onboarding_progress').execute();
  });
});

describe('lifecycle funnel', () => {
  it('counts a strict funnel with medians, segments and the acceptance figure', async () => {
    await t.db
      .updateTable('users')
      .set({ created_at: at(400 * D) })
      .execute(); // earlier tests' users
    const [a, b, c] = await Promise.all([createUser(t), createUser(t), createUser(t, { email_verified: false })]);
    const T0 = at(5 * D);
    const s = (sec: number) => new Date(T0.getTime() + sec * 1000);
    await t.db.updateTable('users').set({ created_at: T0 }).where('id', '=', a.id).execute();
    await t.db
      .updateTable('users')
      .set({ created_at: at(3 * D) })
      .where('id', '=', b.id)
      .execute();
    await t.db
      .updateTable('users')
      .set({ created_at: at(1 * D) })
      .where('id', '=', c.id)
      .execute();
    // a: verified after 60 s, project, worker, message, answer a minute apart each, back two days later; CLI.
    await t.db
      .insertInto('email_tokens')
      .values({ user_id: a.id, kind: 'verify', token_hash: `lf-${a.id}`, expires_at: s(3600), used_at: s(60) })
      .execute();
    const pa = await createProject(t, a.id);
    await t.db
      .updateTable('projects')
      .set({ created_at: s(120) })
      .where('id', '=', pa.id)
      .execute();
    const w = await createWorker(t, pa.id);
    await t.db
      .updateTable('workers')
      .set({ created_at: s(180) })
      .where('id', '=', w.id)
      .execute();
    const m = await t.db
      .insertInto('chat_messages')
      .values({ project_id: pa.id, user_id: a.id, worker_id: w.id, role: 'user', content: 'hi', created_at: s(240) })
      .returning('id')
      .executeTakeFirstOrThrow();
    await t.db
      .insertInto('agent_runs')
      .values({
        project_id: pa.id,
        user_id: a.id,
        worker_id: w.id,
        message_id: m.id,
        status: 'succeeded',
        finished_at: s(300),
      })
      .execute();
    await t.db
      .insertInto('auth_events')
      .values({ user_id: a.id, type: 'login', created_at: s(2 * 86_400) })
      .execute();
    await t.db
      .insertInto('activity_log')
      .values({ type: 'cli_invocation', user_id: a.id, created_at: s(3 * 86_400) })
      .execute();
    // b: verified at signup (no link), a project 10 minutes later, nothing more; messenger.
    const pb = await createProject(t, b.id);
    await t.db
      .updateTable('projects')
      .set({ created_at: new Date(Date.now() - 3 * D + 600_000) })
      .where('id', '=', pb.id)
      .execute();
    await t.db.insertInto('activity_log').values({ type: 'messenger_message', user_id: b.id }).execute();
    // c: unverified, nothing else; web.

    const r = await get('/api/crm/analytics/lifecycle-funnel');
    expect(r.status).toBe(200);
    expect(r.body.windowDays).toBe(30);
    expect(r.body.cohortSize).toBe(3);
    expect(r.body.steps).toEqual([
      { key: 'signup', count: 3, pctOfCohort: 100, pctOfPrev: 100, medianSecondsFromPrev: null },
      { key: 'email_verified', count: 2, pctOfCohort: 66.7, pctOfPrev: 66.7, medianSecondsFromPrev: 0 },
      { key: 'first_project', count: 2, pctOfCohort: 66.7, pctOfPrev: 100, medianSecondsFromPrev: 60 },
      { key: 'first_worker', count: 1, pctOfCohort: 33.3, pctOfPrev: 50, medianSecondsFromPrev: 60 },
      { key: 'first_message', count: 1, pctOfCohort: 33.3, pctOfPrev: 100, medianSecondsFromPrev: 60 },
      { key: 'first_response', count: 1, pctOfCohort: 33.3, pctOfPrev: 100, medianSecondsFromPrev: 60 },
      { key: 'return_day2', count: 1, pctOfCohort: 33.3, pctOfPrev: 100, medianSecondsFromPrev: 2 * 86_400 - 300 },
    ]);
    expect(r.body.acceptance).toEqual({ medianSignupToFirstResponseSec: 300, targetSec: 600, sampleSize: 1 });
    expect(r.body.segments.cli.cohort).toBe(1);
    expect(r.body.segments.cli.steps.map((x: any) => x.count)).toEqual([1, 1, 1, 1, 1, 1, 1]);
    expect(r.body.segments.tg.cohort).toBe(1);
    expect(r.body.segments.tg.steps.map((x: any) => x.count)).toEqual([1, 1, 1, 0, 0, 0, 0]);
    expect(r.body.segments.web.cohort).toBe(1);
    expect(r.body.segments.web.steps.map((x: any) => x.count)).toEqual([1, 0, 0, 0, 0, 0, 0]);
    // A shorter window leaves a out.
    expect((await get('/api/crm/analytics/lifecycle-funnel?days=4')).body.cohortSize).toBe(2);
  });
});

describe('wizard metrics', () => {
  it('records best-effort events and reports them', async () => {
    const post = (body: object) => api(t.app, 'POST', '/api/crm/metrics/wizard', { token: user.token, body });
    for (const body of [
      { action: 'start' },
      { action: 'start' },
      { action: 'start', locale: 'uk' },
      { action: 'complete', duration_ms: 1000, attempts: 1, success: true },
      { action: 'complete', duration_ms: 3000, attempts: 2, success: true },
      { action: 'abandon' },
      { action: 'locale_switch', locale: 'uk' },
    ])
      expect((await post(body)).body).toEqual({ ok: true });
    expect((await post({ action: 'start', extra: 1 })).status).toBe(400);
    expect((await post({ action: 'start', duration_ms: -1 })).status).toBe(400);
    expect((await api(t.app, 'POST', '/api/crm/metrics/wizard', { body: { action: 'start' } })).status).toBe(401);
    const r = await get('/api/crm/analytics/wizard-metrics');
    expect(r.body).toEqual({
      hours: 168,
      starts: 3,
      completions: 2,
      abandons: 1,
      success_rate: 0.6667,
      avg_duration_ms_completed: 2000,
      avg_attempts_completed: 1.5,
      by_action: { start: 3, complete: 2, abandon: 1, locale_switch: 1 },
    });
  });
});

describe('phases and wipe metrics', () => {
  it('reports phase timings and wipe figures from posted phases', async () => {
    const p = await createProject(t, user.id);
    const w1 = await createWorker(t, p.id);
    const w2 = await createWorker(t, p.id);
    const post = (body: object) => api(t.app, 'POST', '/api/crm/analytics/phases', { token: admin.token, body });
    for (const [ms, sid, wid] of [
      [10, 's1', w1.id],
      [20, 's1', w1.id],
      [30, 's2', w2.id],
      [40, 's2', w2.id],
    ] as const)
      expect((await post({ phase: 'wipe_render', duration_ms: ms, session_id: sid, worker_id: wid })).status).toBe(200);
    for (let i = 0; i < 3; i++)
      expect((await post({ phase: 'wipe_interaction', session_id: 's1', worker_id: w1.id })).status).toBe(200);
    expect((await post({ phase: 'boot', duration_ms: 100 })).status).toBe(200);
    expect((await post({ phase: 'Bad Phase' })).status).toBe(400);

    const ph = await get('/api/crm/analytics/phases');
    expect(ph.body).toEqual({
      hours: 168,
      phases: [
        { phase: 'boot', count: 1, p50_ms: 100, p90_ms: 100, max_ms: 100 },
        { phase: 'wipe_interaction', count: 3, p50_ms: null, p90_ms: null, max_ms: null },
        { phase: 'wipe_render', count: 4, p50_ms: 20, p90_ms: 40, max_ms: 40 },
      ],
    });
    const wm = await get('/api/crm/admin/wipe-metrics');
    expect(wm.body.render).toEqual({ count: 4, avg_ms: 25, p50_ms: 20, p95_ms: 40, max_ms: 40 });
    expect(wm.body.interaction).toEqual({
      count: 3,
      avg_per_session: 1.5,
      p95_per_session: 3,
      max_per_session: 3,
      sessions_zero: 1,
    });
    expect(wm.body.by_worker).toEqual([
      { worker_id: w1.id, render_count: 2, avg_render_ms: 15, session_count: 1, avg_interactions: 3 },
      { worker_id: w2.id, render_count: 2, avg_render_ms: 35, session_count: 1, avg_interactions: 0 },
    ]);
    expect(wm.body.daily).toEqual([
      { date: new Date().toISOString().slice(0, 10), renders: 4, interactions: 3, avg_render_ms: 25 },
    ]);
    expect(wm.body.recent).toHaveLength(7);
  });
});

describe('dashboard, sidebar, activity', () => {
  it('shows system figures and platform statistics', async () => {
    const d = await get('/api/crm/admin/dashboard');
    expect(d.status).toBe(200);
    expect(d.body.cpu.cores).toBeGreaterThan(0);
    expect(d.body.memory.total_bytes).toBeGreaterThan(0);
    expect(d.body.disk.total_bytes).toBeGreaterThan(0);
    const users = await t.db.selectFrom('users').select(['plan']).execute();
    expect(d.body.users.total).toBe(users.length);
    expect(d.body.users.per_plan.free).toBe(users.filter((u) => u.plan === 'free').length);
    expect(d.body.containers).toEqual({ total: 0, running: 0, paused: 0, stopped: 0, provisioning: 0 });
    expect(d.body.recent_events.length).toBeLessThanOrEqual(50);
    expect(d.body.recent_events.length).toBeGreaterThan(0);
    const projects = await t.db.selectFrom('projects').select('id').execute();
    expect(d.body.projects.total).toBe(projects.length);
    const s = await get('/api/crm/analytics/sidebar');
    expect(s.body).toMatchObject({ users_total: users.length, projects_total: projects.length });
    const a = await get('/api/crm/analytics/activity?days=1');
    const today = a.body.daily.find((x: any) => x.date === new Date().toISOString().slice(0, 10));
    expect(today.events).toBeGreaterThan(0);
    expect(a.body.byType.find((x: any) => x.type === 'wizard_metric').n).toBe(7);
  });
});
