import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, buildTestApp, createProject, createUser, type TestApp } from '../../../test/helpers.ts';
import { startLlmStandIn } from '../../../test/standins/llm.ts';
import { createWorker, giveKey, waitRun } from '../../../test/runtime-fixtures.ts';
import { nearestRank } from './runtime-analytics.service.ts';

let s: Awaited<ReturnType<typeof startLlmStandIn>>;
let t: TestApp;
let admin: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  s = await startLlmStandIn();
  t = await buildTestApp({ env: { LLM_BASE_URL: s.anthropicUrl } });
  admin = await createUser(t, { role: 'admin' });
});
afterAll(async () => {
  await t?.close();
  await s?.close();
});

describe('runtime analytics', () => {
  it('computes nearest-rank percentiles', () => {
    expect(nearestRank([], 50)).toBeNull();
    expect(nearestRank([3, 1, 2], 50)).toBe(2);
    expect(nearestRank([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90)).toBe(9);
    expect(nearestRank([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 50)).toBe(5);
  });

  it('reports cascade telemetry and per-stage latency of real runs', async () => {
    const u = await createUser(t);
    const p = await createProject(t, u.id);
    await giveKey(t, u.id);
    await t.db
      .updateTable('projects')
      .set({ config: JSON.stringify({ modelMode: 'optimize' }) })
      .where('id', '=', p.id)
      .execute();
    const w = await createWorker(t, p.id, { role: 'developer' });
    s.enqueue(
      {
        content: [{ type: 'text', text: 'cut' }],
        stop_reason: 'max_tokens',
        usage: { input_tokens: 10, output_tokens: 100 },
      },
      { content: [{ type: 'text', text: 'whole answer' }], usage: { input_tokens: 20, output_tokens: 30 } },
    );
    const r = await api(t.app, 'POST', `/api/crm/projects/${p.name}/message`, {
      token: u.token,
      body: { worker_id: w.id, text: 'explain' },
    });
    const run = await waitRun(t, p.name, r.body.run_ids[0], u.token);
    expect(run).toMatchObject({ status: 'succeeded', reply: 'whole answer', cascade: true });
    for (const k of ['queue_ms', 'prep_ms', 'gen_ms', 'total_ms']) expect(run.timings[k]).toBeGreaterThanOrEqual(0);
    // A strict run (not part of the cascade figures).
    await t.db
      .updateTable('projects')
      .set({ config: JSON.stringify({ modelMode: 'strict' }) })
      .where('id', '=', p.id)
      .execute();
    const r2 = await api(t.app, 'POST', `/api/crm/projects/${p.name}/message`, {
      token: u.token,
      body: { worker_id: w.id, text: 'again' },
    });
    await waitRun(t, p.name, r2.body.run_ids[0], u.token);

    const c = await api(t.app, 'GET', '/api/crm/analytics/cascade', { token: admin.token });
    expect(c.status).toBe(200);
    expect(c.body).toEqual({
      windowDays: 14,
      applied: 1,
      escalated: 1,
      escalationReasons: { max_tokens: 1 },
      byModel: expect.arrayContaining([
        { model: 'claude-haiku-4-5', turns: 1, total_tokens: 110 },
        { model: 'claude-sonnet-4-6', turns: 1, total_tokens: 50 },
      ]),
    });
    expect(c.body.byModel).toHaveLength(2);

    const l = await api(t.app, 'GET', '/api/crm/analytics/response-latency?days=1', { token: admin.token });
    expect(l.status).toBe(200);
    expect(l.body.windowDays).toBe(1);
    expect(l.body.sampleSize).toBe(2);
    expect(l.body.stages.total_ms.n).toBe(2);
    expect(l.body.stages.total_ms.p90).toBeGreaterThanOrEqual(l.body.stages.total_ms.p50);
  });

  it('uses nearest-rank p50/p90 over succeeded runs of the window', async () => {
    const u = await createUser(t);
    const p = await createProject(t, u.id);
    const w = await createWorker(t, p.id);
    const msg = await t.db
      .insertInto('chat_messages')
      .values({ project_id: p.id, user_id: u.id, worker_id: w.id, role: 'user', content: 'x' })
      .returning('id')
      .executeTakeFirstOrThrow();
    await t.db.deleteFrom('agent_runs').execute();
    const base = { project_id: p.id, user_id: u.id, worker_id: w.id, message_id: msg.id };
    for (let i = 1; i <= 10; i++)
      await t.db
        .insertInto('agent_runs')
        .values({
          ...base,
          status: 'succeeded',
          finished_at: new Date(),
          queue_ms: i,
          prep_ms: i * 10,
          gen_ms: i * 100,
          total_ms: i * 1000,
        })
        .execute();
    await t.db
      .insertInto('agent_runs')
      .values({
        ...base,
        status: 'failed',
        finished_at: new Date(),
        queue_ms: 999,
        prep_ms: 999,
        gen_ms: 999,
        total_ms: 999,
      })
      .execute();
    await t.db
      .insertInto('agent_runs')
      .values({
        ...base,
        status: 'succeeded',
        finished_at: new Date(Date.now() - 10 * 86_400_000),
        queue_ms: 999,
        prep_ms: 999,
        gen_ms: 999,
        total_ms: 999,
      })
      .execute();
    const l = await api(t.app, 'GET', '/api/crm/analytics/response-latency', { token: admin.token });
    expect(l.body).toEqual({
      windowDays: 7,
      sampleSize: 10,
      stages: {
        queue_ms: { p50: 5, p90: 9, n: 10 },
        prep_ms: { p50: 50, p90: 90, n: 10 },
        gen_ms: { p50: 500, p90: 900, n: 10 },
        total_ms: { p50: 5000, p90: 9000, n: 10 },
      },
    });
    expect(
      (await api(t.app, 'GET', '/api/crm/analytics/response-latency?days=30', { token: admin.token })).body.sampleSize,
    ).toBe(11);
  });

  it('is admin only and validates days', async () => {
    const u = await createUser(t);
    for (const path of ['/api/crm/analytics/response-latency', '/api/crm/analytics/cascade']) {
      expect((await api(t.app, 'GET', path)).status).toBe(401);
      expect((await api(t.app, 'GET', path, { token: u.token })).status).toBe(403);
      expect((await api(t.app, 'GET', `${path}?days=0`, { token: admin.token })).status).toBe(400);
      expect((await api(t.app, 'GET', `${path}?days=91`, { token: admin.token })).status).toBe(400);
      expect((await api(t.app, 'GET', `${path}?days=90`, { token: admin.token })).body.windowDays).toBe(90);
    }
  });
});
