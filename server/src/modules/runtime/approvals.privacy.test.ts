/**
 * Approvals in the privacy export and erasure (docs/ARCHITECTURE.md, Approvals; Privacy): the owner's export
 * lists each project's approvals, pending and decided; erasing the owner deletes them with their queued jobs;
 * erasing someone who decided in another project keeps the decision but not their name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { api, buildTestApp, createProject, createUser, type TestApp } from '../../../test/helpers.ts';
import { startLlmStandIn } from '../../../test/standins/llm.ts';
import { createWorker, giveKey, waitRun } from '../../../test/runtime-fixtures.ts';

let s: Awaited<ReturnType<typeof startLlmStandIn>>;
let t: TestApp;

beforeAll(async () => {
  s = await startLlmStandIn();
  t = await buildTestApp({ env: { LLM_BASE_URL: s.anthropicUrl } });
  s.respond(() => ({ content: [{ type: 'text', text: 'ok' }] }));
});
afterAll(async () => {
  await t?.close();
  await s?.close();
});

const ERASE = { confirm: 'DELETE MY ACCOUNT' };

describe('approvals and privacy', () => {
  it('are exported, pending and decided; erased with the project; a decider erased elsewhere is [deleted]', async () => {
    const u = await createUser(t, { plan: 'free' });
    const p = await createProject(t, u.id);
    await giveKey(t, u.id);
    const w = await createWorker(t, p.id, { label: 'Dev', tools: ['issues'] });
    await t.db
      .updateTable('workers')
      .set({ approvals: JSON.stringify([{ tool: 'create_issue', mode: 'always' }]) })
      .where('id', '=', w.id)
      .execute();
    const runs: number[] = [];
    for (const title of ['Decided by the admin', 'Still pending']) {
      // The call that waits; the model's later answers are the stand-in's default ('ok').
      s.enqueue({ content: [{ type: 'tool_use', name: 'create_issue', input: { title } }] });
      const m = await api(t.app, 'POST', `/api/crm/projects/${p.name}/message`, {
        token: u.token,
        body: { worker_id: w.id, text: title },
      });
      runs.push(m.body.run_ids[0]);
      expect((await waitRun(t, p.name, m.body.run_ids[0], u.token)).status).toBe('waiting_approval');
    }
    const list = (await api(t.app, 'GET', `/api/crm/projects/${p.name}/approvals`, { token: u.token })).body
      .approvals as any[];
    const first = list.find((a) => a.run_id === runs[0]);
    const admin = await createUser(t, { role: 'admin' });
    const d = await api(t.app, 'POST', `/api/crm/projects/${p.name}/approvals/${first.id}`, {
      token: admin.token,
      body: { decision: 'deny', reason: 'admin says no' },
    });
    expect(d.status).toBe(200);
    expect((await waitRun(t, p.name, runs[0], u.token)).status).toBe('succeeded');

    // The owner's export: both approvals of the project, without internal ids of the model's calls.
    const exp = await api(t.app, 'GET', '/api/auth/export', { token: u.token });
    expect(exp.status).toBe(200);
    const doc = JSON.parse(exp.text);
    const mine = doc.projects.find((x: any) => JSON.stringify(x).includes(p.name));
    expect(mine.approvals).toHaveLength(2);
    expect(mine.approvals).toEqual([
      expect.objectContaining({
        run_id: runs[0],
        tool: 'create_issue',
        input: { title: 'Decided by the admin' },
        status: 'denied',
        reason: 'admin says no',
        decided_by: admin.email,
        channel: 'web',
      }),
      expect.objectContaining({ run_id: runs[1], status: 'pending', decided_by: null }),
    ]);
    expect(Object.keys(mine.approvals[0]).sort()).toEqual(
      [
        'id',
        'run_id',
        'worker_id',
        'tool',
        'input',
        'status',
        'reason',
        'decided_by',
        'channel',
        'created_at',
        'decided_at',
      ].sort(),
    );

    // The admin leaves: the decision stays, their name does not (nor in the project's activity).
    expect((await api(t.app, 'DELETE', '/api/auth/account', { token: admin.token, body: ERASE })).status).toBe(200);
    const kept = await t.db.selectFrom('approvals').selectAll().where('id', '=', first.id).executeTakeFirstOrThrow();
    expect(kept).toMatchObject({ status: 'denied', decided_by: '[deleted]', decided_by_user: null });
    const leaks = await sql<{ n: number }>`
      select count(*)::int as n from activity_log x
      where project_id = ${p.id} and strpos(lower(row_to_json(x)::text), ${admin.email.toLowerCase()}) > 0`.execute(
      t.db,
    );
    expect(leaks.rows[0].n).toBe(0);

    // The owner leaves: the project's approvals and their queued jobs go.
    const ids = list.map((a) => String(a.id));
    const jobsOf = async () =>
      (
        await sql<{ n: number }>`
          select count(*)::int as n from pgboss.job
          where name in ('approvals.expire', 'approvals.notify') and state in ('created', 'retry')
            and data->>'approval_id' in (${sql.join(ids)})`.execute(t.db)
      ).rows[0].n;
    expect(await jobsOf()).toBeGreaterThan(0); // the pending one's expiry, at least
    expect((await api(t.app, 'DELETE', '/api/auth/account', { token: u.token, body: ERASE })).status).toBe(200);
    expect(await t.db.selectFrom('approvals').select('id').where('project_id', '=', p.id).execute()).toEqual([]);
    expect(await jobsOf()).toBe(0);
  });
});
