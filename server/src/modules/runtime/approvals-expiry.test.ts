/**
 * Approval expiry (docs/ARCHITECTURE.md, Approvals): an approval left pending past `APPROVAL_TIMEOUT_S` is expired
 * by its delayed job and the run goes on with the call refused for that reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, buildTestApp, createProject, createUser, type TestApp } from '../../../test/helpers.ts';
import { startLlmStandIn } from '../../../test/standins/llm.ts';
import { createWorker, giveKey, waitRun } from '../../../test/runtime-fixtures.ts';

let s: Awaited<ReturnType<typeof startLlmStandIn>>;
let t: TestApp;

beforeAll(async () => {
  s = await startLlmStandIn();
  t = await buildTestApp({ env: { LLM_BASE_URL: s.anthropicUrl, APPROVAL_TIMEOUT_S: '1' } });
});
afterAll(async () => {
  await t?.close();
  await s?.close();
});

describe('approval expiry', () => {
  it('a pending approval expires after APPROVAL_TIMEOUT_S and the model is told the call was refused', async () => {
    const u = await createUser(t, { plan: 'free' });
    const p = await createProject(t, u.id);
    await giveKey(t, u.id);
    const w = await createWorker(t, p.id, { label: 'Dev', tools: ['issues'] });
    await t.db
      .updateTable('workers')
      .set({ approvals: JSON.stringify([{ tool: 'create_issue', mode: 'always' }]) })
      .where('id', '=', w.id)
      .execute();
    s.enqueue(
      { content: [{ type: 'tool_use', name: 'create_issue', input: { title: 'Late' } }] },
      { content: [{ type: 'text', text: 'Nobody answered.' }] },
    );
    const before = s.modelCalls().length;
    const r = await api(t.app, 'POST', `/api/crm/projects/${p.name}/message`, {
      token: u.token,
      body: { worker_id: w.id, text: 'File it' },
    });
    const runId = r.body.run_ids[0];
    expect((await waitRun(t, p.name, runId, u.token)).status).toBe('waiting_approval');
    // The delayed job expires it (polled every 5 s) and the run resumes.
    const end = Date.now() + 20_000;
    let run: any;
    for (;;) {
      run = (await api(t.app, 'GET', `/api/crm/projects/${p.name}/runs/${runId}`, { token: u.token })).body;
      if (['succeeded', 'failed', 'cancelled'].includes(run.status) || Date.now() > end) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    expect(run.status).toBe('succeeded');
    const [a] = (await api(t.app, 'GET', `/api/crm/projects/${p.name}/approvals`, { token: u.token })).body.approvals;
    expect(a).toMatchObject({ status: 'expired', channel: 'system', decided_by: 'system' });
    expect(s.modelCalls().length - before).toBe(2);
    const result = s.modelCalls().at(-1)!.body.messages.at(-1).content[0];
    expect(result).toMatchObject({ type: 'tool_result', is_error: true });
    expect(JSON.stringify(result.content)).toContain('nobody approved it in time');
    expect(await t.db.selectFrom('issues').select('title').where('project_id', '=', p.id).execute()).toEqual([]);
    // A decision after the expiry answers 409 with the expiry.
    const late = await api(t.app, 'POST', `/api/crm/projects/${p.name}/approvals/${a.id}`, {
      token: u.token,
      body: { decision: 'approve' },
    });
    expect(late.status).toBe(409);
    expect(late.body.approval).toMatchObject({ status: 'expired' });
  });
});
