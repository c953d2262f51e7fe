import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { api, buildTestApp, createProject, createUser, TEST_KEYS, type TestApp } from '../../../test/helpers.ts';
import { startLlmStandIn } from '../../../test/standins/llm.ts';
import { buildApp } from '../../app.ts';
import { createDeps } from '../../deps.ts';
import { silentLogger } from '../../lib/logger.ts';
import { createSkill, createWorker, giveKey, waitFor, waitRun } from '../../../test/runtime-fixtures.ts';
import { reportedWorkerStatus } from './runtime.rules.ts';
import { TOOL_RESULT_PREVIEW_BYTES } from './tool-result.ts';

let s: Awaited<ReturnType<typeof startLlmStandIn>>;
let t: TestApp;

beforeAll(async () => {
  s = await startLlmStandIn();
  t = await buildTestApp({ env: { LLM_BASE_URL: s.anthropicUrl } });
});
afterAll(async () => {
  await t?.close();
  await s?.close();
});
beforeEach(() => {
  s.respond(() => ({ content: [{ type: 'text', text: 'ok' }] }));
});

async function setup(opts: { plan?: string; worker?: Parameters<typeof createWorker>[2]; key?: boolean } = {}) {
  const u = await createUser(t, { plan: opts.plan ?? 'free' });
  const p = await createProject(t, u.id);
  if (opts.key !== false) await giveKey(t, u.id);
  const w = await createWorker(t, p.id, opts.worker);
  return { u, p, w };
}
const message = (name: string, token: string, body: unknown) =>
  api(t.app, 'POST', `/api/crm/projects/${name}/message`, { token, body });
const callsSince = (n: number) => s.modelCalls().slice(n);

describe('agent runs', () => {
  it('takes an issue and logs to it, metering every call and writing the activity feed', async () => {
    const { u, p, w } = await setup({
      worker: { label: 'Dev', system_prompt: 'You are Dev.', tools: ['issues', 'files'] },
    });
    await t.db.updateTable('projects').set({ protocol: 'Always log progress.' }).where('id', '=', p.id).execute();
    fs.writeFileSync(path.join(p.dir, 'MANIFEST.md'), 'M'.repeat(9000));
    // The real issues area behind the agent's issue tools.
    const created = await api(t.app, 'POST', `/api/crm/projects/${p.name}/issues`, {
      token: u.token,
      body: { title: 'Fix login', priority: 'P1' },
    });
    expect(created.status).toBe(201);
    const issue = created.body;
    const before = s.modelCalls().length;
    s.enqueue(
      {
        content: [
          { type: 'text', text: 'Taking it.' },
          { type: 'tool_use', name: 'take_issue', input: { issue_id: issue.id } },
        ],
        usage: { input_tokens: 100, output_tokens: 10 },
      },
      {
        content: [
          {
            type: 'tool_use',
            name: 'log_issue',
            input: { issue_id: issue.id, message: 'Found the bug in the session check.' },
          },
        ],
        usage: { input_tokens: 150, output_tokens: 12, cache_read_input_tokens: 7 },
      },
      {
        content: [{ type: 'text', text: 'Done: the issue is in progress and logged.' }],
        usage: { input_tokens: 200, output_tokens: 20 },
      },
    );
    const r = await message(p.name, u.token, { worker_id: w.id, text: 'Please take issue 1' });
    expect(r.status).toBe(202);
    expect(r.body.run_ids).toHaveLength(1);
    const run = await waitRun(t, p.name, r.body.run_ids[0], u.token);
    expect(run).toMatchObject({
      status: 'succeeded',
      turns: 3,
      worker_id: w.id,
      message_id: r.body.message_id,
      error: null,
      cascade: false,
      model: 'claude-sonnet-4-6',
    });
    expect(run.reply).toBe('Taking it.\n\nDone: the issue is in progress and logged.');
    expect(run.tool_calls.map((c: any) => c.tool)).toEqual(['take_issue', 'log_issue']);
    expect(run.usage).toEqual({ input_tokens: 450, output_tokens: 42, cache_tokens: 7, total_tokens: 499 });
    expect(run.timings.total_ms).toBeGreaterThanOrEqual(0);
    const stored = (await api(t.app, 'GET', `/api/crm/projects/${p.name}/issues/${issue.id}`, { token: u.token })).body;
    expect(stored.status).toBe('in_progress');
    expect(stored.assignee).toBe('Dev');
    expect(stored.activity.map((l: any) => l.message)).toContain('Found the bug in the session check.');
    expect(stored.activity.find((l: any) => l.message === 'Found the bug in the session check.').author).toBe('Dev');

    const calls = callsSince(before);
    expect(calls).toHaveLength(3);
    const first = calls[0].body;
    expect(first.model).toBe('claude-sonnet-4-6');
    expect(first.tools.map((x: any) => x.name)).toEqual(
      expect.arrayContaining(['take_issue', 'log_issue', 'create_issue', 'read_file']),
    );
    expect(first.tools.map((x: any) => x.name)).not.toContain('bash');
    const system: string = first.system;
    expect(system.indexOf('You are Dev.')).toBeLessThan(system.indexOf('Always log progress.'));
    expect(system.indexOf('Always log progress.')).toBeLessThan(system.indexOf('# Project manifest'));
    expect(system).toContain('M'.repeat(8000));
    expect(system).not.toContain('M'.repeat(8001));
    expect(calls[1].body.messages.at(-1).content[0]).toMatchObject({ type: 'tool_result' });

    const usage = await t.db.selectFrom('token_usage').selectAll().where('run_id', '=', run.id).orderBy('id').execute();
    expect(usage).toHaveLength(3);
    expect(usage[1]).toMatchObject({
      user_id: u.id,
      project_id: p.id,
      project_name: p.name,
      worker_id: w.id,
      model: 'claude-sonnet-4-6',
      source: 'worker',
      input_tokens: 150,
      output_tokens: 12,
      cache_tokens: 7,
      total_tokens: 169,
    });
    const events = await t.db
      .selectFrom('activity_log')
      .select(['type', 'worker_id'])
      .where('project_id', '=', p.id)
      .orderBy('id')
      .execute();
    expect(events.map((e) => e.type)).toEqual(['browser_chat_message', 'session_start', 'issue_pick', 'issue_log']);
    expect(events.slice(1).every((e) => e.worker_id === w.id)).toBe(true);
    const worker = await t.db
      .selectFrom('workers')
      .select(['status', 'status_started_at'])
      .where('id', '=', w.id)
      .executeTakeFirstOrThrow();
    expect(worker.status).toBe('idle');
    expect(worker.status_started_at).toBeInstanceOf(Date);
    const msgs = await t.db
      .selectFrom('chat_messages')
      .select(['role', 'content', 'worker_id'])
      .where('project_id', '=', p.id)
      .orderBy('id')
      .execute();
    expect(msgs).toEqual([
      { role: 'user', content: 'Please take issue 1', worker_id: w.id },
      { role: 'assistant', content: run.reply, worker_id: w.id },
    ]);
  });

  it('credits the worker, not the project owner, for issues and wiki pages written through its tools', async () => {
    const { u, p, w } = await setup({ worker: { label: 'Scribe', tools: ['issues', 'wiki'] } });
    s.enqueue(
      { content: [{ type: 'tool_use', name: 'create_issue', input: { title: 'Write the guide', priority: 'P1' } }] },
      { content: [{ type: 'tool_use', name: 'update_issue', input: { issue_id: 1, status: 'closed' } }] },
      {
        content: [
          { type: 'tool_use', name: 'save_wiki_page', input: { path: 'guides/start.md', content: '# Start\n\nHi.' } },
        ],
      },
      { content: [{ type: 'text', text: 'Filed, closed and documented.' }] },
    );
    const r = await message(p.name, u.token, { worker_id: w.id, text: 'file it, close it, write it down' });
    const run = await waitRun(t, p.name, r.body.run_ids[0], u.token);
    expect(run.status).toBe('succeeded');
    expect(run.tool_calls.map((c: any) => [c.tool, c.is_error])).toEqual([
      ['create_issue', false],
      ['update_issue', false],
      ['save_wiki_page', false],
    ]);
    const issue = (await api(t.app, 'GET', `/api/crm/projects/${p.name}/issues/1`, { token: u.token })).body;
    expect(issue).toMatchObject({ created_by: 'Scribe', status: 'closed' });
    expect(issue.activity.map((e: any) => [e.kind, e.author])).toEqual([
      ['create', 'Scribe'],
      ['status', 'Scribe'],
    ]);
    const close = await t.db
      .selectFrom('activity_log')
      .select(['actor', 'worker_id'])
      .where('project_id', '=', p.id)
      .where('type', '=', 'issue_close')
      .executeTakeFirstOrThrow();
    expect(close).toEqual({ actor: 'Scribe', worker_id: w.id });
    const page = await api(t.app, 'GET', `/api/crm/projects/${p.name}/wiki/file?path=guides/start.md`, {
      token: u.token,
    });
    expect(page.body).toMatchObject({ content: '# Start\n\nHi.', updated_by: 'Scribe' });
    // The same routes used by the owner credit the owner.
    const own = await api(t.app, 'PUT', `/api/crm/projects/${p.name}/wiki/save`, {
      token: u.token,
      body: { path: 'guides/start.md', content: '# Start\n\nEdited.' },
    });
    expect(own.body.updated_by).toBe(u.email);
  });

  it('stops at max_turns with a failed run that can be retried', async () => {
    const { u, p, w } = await setup({ worker: { max_turns: 2 } });
    s.respond(() => ({ content: [{ type: 'tool_use', name: 'list_files', input: {} }] }));
    const before = s.modelCalls().length;
    const r = await message(p.name, u.token, { worker_id: w.id, text: 'look around' });
    const run = await waitRun(t, p.name, r.body.run_ids[0], u.token);
    expect(run).toMatchObject({ status: 'failed', error: 'max_turns_reached', turns: 2 });
    expect(callsSince(before)).toHaveLength(2);
    s.respond(() => ({ content: [{ type: 'text', text: 'fine now' }] }));
    const again = await api(t.app, 'POST', `/api/crm/projects/${p.name}/runs/${run.id}/retry`, { token: u.token });
    expect(again.status).toBe(202);
    expect(again.body.retry_of).toBe(run.id);
    const second = await waitRun(t, p.name, again.body.run_id, u.token);
    expect(second).toMatchObject({
      status: 'succeeded',
      reply: 'fine now',
      message_id: run.message_id,
      retry_of: run.id,
    });
    const notAgain = await api(t.app, 'POST', `/api/crm/projects/${p.name}/runs/${second.id}/retry`, {
      token: u.token,
    });
    expect(notAgain.status).toBe(409);
    expect(notAgain.body.error).toBe('run_not_retryable');
  });

  it('sends one message to two workers in parallel', async () => {
    const { u, p, w } = await setup();
    const w2 = await createWorker(t, p.id, { label: 'Second' });
    s.respond(async (req) => ({
      delayMs: 150,
      content: [{ type: 'text', text: `from ${req.body.system.includes('Second') ? 'second' : 'first'}` }],
    }));
    const r = await message(p.name, u.token, { worker_ids: [w.id, w2.id], text: 'status?' });
    expect(r.status).toBe(202);
    expect(r.body.run_ids).toHaveLength(2);
    const runs = await Promise.all(r.body.run_ids.map((id: number) => waitRun(t, p.name, id, u.token)));
    expect(runs.map((x) => x.status)).toEqual(['succeeded', 'succeeded']);
    expect(runs.map((x) => x.worker_id)).toEqual([w.id, w2.id]);
    expect(runs.map((x) => x.reply)).toEqual(['from first', 'from second']);
    // They overlapped: the second started before the first finished.
    expect(+new Date(runs[1].started_at)).toBeLessThan(+new Date(runs[0].finished_at));
    const ev = await t.db
      .selectFrom('activity_log')
      .select(['payload'])
      .where('project_id', '=', p.id)
      .where('type', '=', 'browser_chat_message')
      .execute();
    expect(ev).toHaveLength(1);
    expect(ev[0].payload).toMatchObject({ message_id: r.body.message_id, worker_ids: [w.id, w2.id] });
  });

  it('auto-loads context skills cut to 3000 characters and loads/unloads skills with events', async () => {
    const { u, p, w } = await setup({ worker: { context_assets: ['style'] } });
    await createSkill(t, p.id, { name: 'style', description: 'about style', content: 'S'.repeat(5000) });
    await createSkill(t, p.id, { name: 'deploy', description: 'about deploy', content: 'Deploy steps.' });
    {
      const before = s.modelCalls().length;
      s.enqueue(
        { content: [{ type: 'tool_use', name: 'load_skill', input: { name: 'deploy' } }] },
        { content: [{ type: 'tool_use', name: 'unload_skill', input: { name: 'deploy' } }] },
        { content: [{ type: 'text', text: 'ok' }] },
      );
      const r = await message(p.name, u.token, { worker_id: w.id, text: 'deploy' });
      const run = await waitRun(t, p.name, r.body.run_ids[0], u.token);
      expect(run.status).toBe('succeeded');
      const calls = callsSince(before);
      expect(calls[0].body.system).toContain('# Skills\n');
      expect(calls[0].body.system).toContain('\n- style: about style\n');
      expect(calls[0].body.system).toContain('\n- deploy: about deploy');
      expect(calls[0].body.system).toContain('S'.repeat(3000));
      expect(calls[0].body.system).not.toContain('S'.repeat(3001));
      expect(calls[1].body.messages.at(-1).content[0].content).toBe('Deploy steps.');
      const types = (
        await t.db
          .selectFrom('activity_log')
          .select('type')
          .where('worker_id', '=', w.id)
          .where('type', '<>', 'browser_chat_message')
          .orderBy('id')
          .execute()
      ).map((e) => e.type);
      expect(types).toEqual(['session_start', 'skill_loaded', 'skill_unloaded']);
    }
  });

  it('keeps file tools inside the focus directories', async () => {
    const { u, p, w } = await setup({ worker: { focus_dirs: ['src'], tools: ['files'] } });
    fs.mkdirSync(path.join(p.dir, 'docs'), { recursive: true });
    fs.writeFileSync(path.join(p.dir, 'docs', 'secret.md'), 'secret');
    const outside = fs.mkdtempSync(path.join(t.dataDir, 'outside-'));
    fs.writeFileSync(path.join(outside, 'x.txt'), 'outside');
    fs.mkdirSync(path.join(p.dir, 'src'), { recursive: true });
    fs.symlinkSync(outside, path.join(p.dir, 'src', 'link'));
    const attempts = [
      { name: 'write_file', input: { path: 'src/app/a.txt', content: 'hello' } },
      { name: 'read_file', input: { path: 'src/app/a.txt' } },
      { name: 'read_file', input: { path: '../../keys.json' } },
      { name: 'read_file', input: { path: '/etc/passwd' } },
      { name: 'read_file', input: { path: 'docs/secret.md' } },
      { name: 'read_file', input: { path: 'src/link/x.txt' } },
      { name: 'write_file', input: { path: 'src/link/y.txt', content: 'no' } },
      { name: 'write_file', input: { path: 'src/../docs/z.md', content: 'no' } },
    ];
    s.enqueue(
      { content: attempts.map((a) => ({ type: 'tool_use' as const, ...a })) },
      { content: [{ type: 'text', text: 'done' }] },
    );
    const before = s.modelCalls().length;
    const r = await message(p.name, u.token, { worker_id: w.id, text: 'files' });
    const run = await waitRun(t, p.name, r.body.run_ids[0], u.token);
    expect(run.status).toBe('succeeded');
    const results = callsSince(before)[1].body.messages.at(-1).content;
    expect(results.map((x: any) => !!x.is_error)).toEqual([false, false, true, true, true, true, true, true]);
    expect(results[1].content).toBe('hello');
    expect(fs.readFileSync(path.join(p.dir, 'src', 'app', 'a.txt'), 'utf8')).toBe('hello');
    expect(fs.existsSync(path.join(outside, 'y.txt'))).toBe(false);
    expect(fs.existsSync(path.join(p.dir, 'docs', 'z.md'))).toBe(false);
  });

  it("keeps each tool call's result as a redacted preview bounded to 4 KiB, shown to the project's owner only", async () => {
    const { u, p, w } = await setup({ worker: { tools: ['files'] } });
    const body = `Deploy with https://deploy.test/hook?token=live-hook-secret-42 then:\n${'log line\n'.repeat(2000)}`;
    fs.writeFileSync(path.join(p.dir, 'deploy.md'), body);
    s.enqueue(
      {
        content: [
          { type: 'tool_use', name: 'read_file', input: { path: 'deploy.md' } },
          { type: 'tool_use', name: 'read_file', input: { path: 'missing.md', api_key: 'input-secret-7' } },
        ],
      },
      { content: [{ type: 'text', text: 'read' }] },
    );
    const r = await message(p.name, u.token, { worker_id: w.id, text: 'read the deploy notes' });
    const run = await waitRun(t, p.name, r.body.run_ids[0], u.token);
    expect(run.status).toBe('succeeded');
    const [ok, failed] = run.tool_calls;
    expect(ok).toMatchObject({ tool: 'read_file', is_error: false, summary: '{"path":"deploy.md"}' });
    expect(ok.result).toMatchObject({ truncated: true, json: false });
    expect(Buffer.byteLength(ok.result.preview)).toBeLessThanOrEqual(TOOL_RESULT_PREVIEW_BYTES);
    expect(ok.result.preview.length).toBeGreaterThan(4000);
    expect(ok.result.preview).toMatch(
      /^Deploy with https:\/\/deploy\.test\/hook\?token=\[redacted\] then:\nlog line\n/,
    );
    expect(ok.result.bytes).toBe(Buffer.byteLength(body) - 'live-hook-secret-42'.length + '[redacted]'.length);
    expect(JSON.stringify(run)).not.toContain('live-hook-secret-42');
    expect(failed).toMatchObject({
      is_error: true,
      summary: '{"path":"missing.md","api_key":"[redacted]"}',
      result: { preview: 'No file at missing.md.', bytes: 22, truncated: false, json: false },
    });
    // Stored with the run (its tool_calls), without the secret.
    const row = await t.db
      .selectFrom('agent_runs')
      .select('tool_calls')
      .where('id', '=', run.id)
      .executeTakeFirstOrThrow();
    expect(row.tool_calls[0].result?.preview).toBe(ok.result.preview);
    expect(JSON.stringify(row.tool_calls)).not.toMatch(/live-hook-secret-42|input-secret-7/);
    // The runs list leaves the results out; the run's page has them.
    const list = await api(t.app, 'GET', `/api/crm/projects/${p.name}/runs`, { token: u.token });
    expect(list.body.runs[0].tool_calls.map((c: any) => Object.keys(c).sort())).toEqual([
      ['is_error', 'summary', 'tool', 'turn'],
      ['is_error', 'summary', 'tool', 'turn'],
    ]);
    // Another tenant reads neither the run nor its results.
    const other = await createUser(t);
    const theirs = await api(t.app, 'GET', `/api/crm/projects/${p.name}/runs/${run.id}`, { token: other.token });
    expect(theirs.status).toBe(403);
    expect(JSON.stringify(theirs.body)).not.toContain('Deploy with');
    const { u: u2, p: p2 } = await setup();
    const cross = await api(t.app, 'GET', `/api/crm/projects/${p2.name}/runs/${run.id}`, { token: u2.token });
    expect([cross.status, cross.body.error]).toEqual([404, 'run_not_found']);
  });
});

describe('token budgets', () => {
  it('refuses a new run once the daily cap of the plan is used, with a token_budget event', async () => {
    const { u, p, w } = await setup({ plan: 'free' });
    await t.db
      .insertInto('token_usage')
      .values({ user_id: u.id, project_id: p.id, worker_id: w.id, model: 'm', source: 'worker', total_tokens: 100_000 })
      .execute();
    const r = await message(p.name, u.token, { worker_id: w.id, text: 'more' });
    expect(r.status).toBe(429);
    expect(r.body).toMatchObject({
      error: 'token_budget_exceeded',
      scope: 'daily',
      cap: 100_000,
      used: 100_000,
      plan: 'free',
      worker_id: w.id,
    });
    const ev = await t.db
      .selectFrom('activity_log')
      .selectAll()
      .where('worker_id', '=', w.id)
      .where('type', '=', 'token_budget')
      .execute();
    expect(ev).toHaveLength(1);
    // Yesterday's usage does not count.
    await t.db
      .updateTable('token_usage')
      .set({ created_at: new Date(Date.now() - 2 * 86_400_000) })
      .where('worker_id', '=', w.id)
      .execute();
    expect((await message(p.name, u.token, { worker_id: w.id, text: 'more' })).status).toBe(202);
  });

  it('leaves beta unmetered and gives starter 400K', async () => {
    const beta = await setup({ plan: 'beta' });
    await t.db
      .insertInto('token_usage')
      .values({ user_id: beta.u.id, project_id: beta.p.id, worker_id: beta.w.id, total_tokens: 10_000_000 })
      .execute();
    expect((await message(beta.p.name, beta.u.token, { worker_id: beta.w.id, text: 'x' })).status).toBe(202);
    const starter = await setup({ plan: 'starter' });
    await t.db
      .insertInto('token_usage')
      .values({ user_id: starter.u.id, project_id: starter.p.id, worker_id: starter.w.id, total_tokens: 399_999 })
      .execute();
    expect((await message(starter.p.name, starter.u.token, { worker_id: starter.w.id, text: 'x' })).status).toBe(202);
    await t.db
      .insertInto('token_usage')
      .values({ user_id: starter.u.id, project_id: starter.p.id, worker_id: starter.w.id, total_tokens: 1 })
      .execute();
    expect((await message(starter.p.name, starter.u.token, { worker_id: starter.w.id, text: 'x' })).body).toMatchObject(
      { error: 'token_budget_exceeded', cap: 400_000 },
    );
  });

  it('runs a trial project on the platform key until the 100K trial tokens are used', async () => {
    await t.deps.secrets.set('PLATFORM_LLM_KEY', 'sk-platform-key-0001');
    const { u, p, w } = await setup({ plan: 'beta', key: false });
    await t.db.updateTable('projects').set({ trial_mode: true }).where('id', '=', p.id).execute();
    await t.db.insertInto('trials').values({ user_id: u.id, project_id: p.id, tokens_granted: 100_000 }).execute();
    const before = s.modelCalls().length;
    const r = await message(p.name, u.token, { worker_id: w.id, text: 'hi' });
    expect(r.status).toBe(202);
    expect((await waitRun(t, p.name, r.body.run_ids[0], u.token)).status).toBe('succeeded');
    const keys = callsSince(before).map((c) => c.headers['x-api-key'] ?? c.headers.authorization);
    expect(keys.some((k) => /^(Bearer )?sk-platform-key-0001$/.test(String(k)))).toBe(true);
    const drawn = await t.db.selectFrom('token_usage').select(['key_source']).where('user_id', '=', u.id).execute();
    expect(drawn.length).toBeGreaterThan(0);
    expect(drawn.every((r) => r.key_source === 'trial')).toBe(true);
    await t.db
      .insertInto('token_usage')
      .values({ user_id: u.id, project_id: p.id, worker_id: null, key_source: 'trial', total_tokens: 100_000 })
      .execute();
    const refused = await message(p.name, u.token, { worker_id: w.id, text: 'hi' });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: 'token_budget_exceeded', scope: 'trial', cap: 100_000 });
  });

  it('holds the budget during a run: a call that would cross the cap is not made; what was done is kept', async () => {
    const { u, p, w } = await setup({ plan: 'free', worker: { tools: ['issues'] } });
    await t.db
      .insertInto('token_usage')
      .values({ user_id: u.id, project_id: p.id, worker_id: w.id, model: 'm', total_tokens: 92_000 })
      .execute();
    const before = s.modelCalls().length;
    s.enqueue({
      content: [{ type: 'tool_use', name: 'create_issue', input: { title: 'Budget check' } }],
      usage: { input_tokens: 3000, output_tokens: 4900 },
    });
    const r = await message(p.name, u.token, { worker_id: w.id, text: 'file it' });
    const run = await waitRun(t, p.name, r.body.run_ids[0], u.token);
    expect(run).toMatchObject({ status: 'failed', error: 'token_budget_exceeded', turns: 1 });
    expect(callsSince(before)).toHaveLength(1);
    // The first call was granted its full output bound; the issue it filed is kept.
    expect(callsSince(before)[0].body.max_tokens).toBe(4096);
    const issue = await t.db.selectFrom('issues').select('title').where('project_id', '=', p.id).executeTakeFirst();
    expect(issue?.title).toBe('Budget check');
    const used = await t.db
      .selectFrom('token_usage')
      .select((eb) => eb.fn.sum<number>('total_tokens').as('n'))
      .where('worker_id', '=', w.id)
      .executeTakeFirstOrThrow();
    expect(Number(used.n)).toBe(99_900);
    const ev = await t.db
      .selectFrom('activity_log')
      .select('payload')
      .where('worker_id', '=', w.id)
      .where('type', '=', 'token_budget')
      .execute();
    expect(ev).toHaveLength(1);
    expect(await t.db.selectFrom('token_reservations').select('id').where('worker_id', '=', w.id).execute()).toEqual(
      [],
    );
  });

  it('two runs of one worker racing for the last tokens cannot both call the model', async () => {
    const { u, p, w } = await setup({ plan: 'free' });
    await t.db
      .insertInto('token_usage')
      .values({ user_id: u.id, project_id: p.id, worker_id: w.id, model: 'm', total_tokens: 94_000 })
      .execute();
    // The model answers the first call only once the other run has ended (or after 10 s), so the other run
    // reserves while that call is under way, whatever the load: with budgets held it is refused at once;
    // without them both runs would call the model.
    let runIds: number[] = [];
    const otherEnded = async () => {
      const end = Date.now() + 10_000;
      while (Date.now() < end) {
        const rows = await t.db.selectFrom('agent_runs').select('status').where('id', 'in', runIds).execute();
        if (rows.some((r) => r.status === 'failed' || r.status === 'succeeded')) return;
        await new Promise((r) => setTimeout(r, 25));
      }
    };
    s.respond(async () => {
      await otherEnded();
      return { content: [{ type: 'text', text: 'done' }], usage: { input_tokens: 2500, output_tokens: 2500 } };
    });
    const before = s.modelCalls().length;
    const [a, b] = await Promise.all([
      message(p.name, u.token, { worker_id: w.id, text: 'first' }),
      message(p.name, u.token, { worker_id: w.id, text: 'second' }),
    ]);
    expect([a.status, b.status]).toEqual([202, 202]);
    runIds = [a.body.run_ids[0], b.body.run_ids[0]];
    const runs = await Promise.all([
      waitRun(t, p.name, a.body.run_ids[0], u.token),
      waitRun(t, p.name, b.body.run_ids[0], u.token),
    ]);
    expect(runs.map((x) => x.status).sort()).toEqual(['failed', 'succeeded']);
    expect(runs.find((x) => x.status === 'failed')?.error).toBe('token_budget_exceeded');
    expect(callsSince(before)).toHaveLength(1);
    // Only the run that called the model started working; the refused one logged no session_start.
    const starts = await t.db
      .selectFrom('activity_log')
      .select('payload')
      .where('worker_id', '=', w.id)
      .where('type', '=', 'session_start')
      .execute();
    expect(starts.map((e) => (e.payload as { run_id: number }).run_id)).toEqual([
      runs.find((x) => x.status === 'succeeded')!.id,
    ]);
    const used = await t.db
      .selectFrom('token_usage')
      .select((eb) => eb.fn.sum<number>('total_tokens').as('n'))
      .where('worker_id', '=', w.id)
      .executeTakeFirstOrThrow();
    expect(Number(used.n)).toBeLessThanOrEqual(100_000);
  });

  it('a run that fails before its first model call (no key when it executes) writes no session_start', async () => {
    // A queued run whose owner has no key by the time the job executes it (submit would refuse it now).
    const { u, p, w } = await setup({ key: false });
    const msg = await t.db
      .insertInto('chat_messages')
      .values({
        project_id: p.id,
        user_id: u.id,
        worker_id: w.id,
        recipients: JSON.stringify([w.id]),
        role: 'user',
        content: 'hi',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const run = await t.db
      .insertInto('agent_runs')
      .values({ project_id: p.id, user_id: u.id, worker_id: w.id, message_id: msg.id })
      .returning('id')
      .executeTakeFirstOrThrow();
    const before = s.modelCalls().length;
    await t.services.runtime.execute(run.id);
    const done = await api(t.app, 'GET', `/api/crm/projects/${p.name}/runs/${run.id}`, { token: u.token });
    expect(done.body).toMatchObject({ status: 'failed', error: 'llm_key_required', turns: 0 });
    expect(callsSince(before)).toHaveLength(0);
    const types = await t.db.selectFrom('activity_log').select('type').where('worker_id', '=', w.id).execute();
    expect(types.map((e) => e.type)).not.toContain('session_start');
  });

  it('needs a key outside trial mode: 400 llm_key_required; 503 llm_unavailable without a platform key', async () => {
    const { u, p, w } = await setup({ key: false });
    expect((await message(p.name, u.token, { worker_id: w.id, text: 'hi' })).body.error).toBe('llm_key_required');
    const t2 = await buildTestApp({ env: { LLM_BASE_URL: s.anthropicUrl } });
    try {
      const u2 = await createUser(t2);
      const p2 = await createProject(t2, u2.id);
      await t2.db.updateTable('projects').set({ trial_mode: true }).where('id', '=', p2.id).execute();
      const w2 = await createWorker(t2, p2.id);
      const r = await api(t2.app, 'POST', `/api/crm/projects/${p2.name}/message`, {
        token: u2.token,
        body: { worker_id: w2.id, text: 'hi' },
      });
      expect(r.status).toBe(503);
      expect(r.body.error).toBe('llm_unavailable');
    } finally {
      await t2.close();
    }
  });
});

describe('cascade', () => {
  it('starts optimize-mode runs on the role tier and escalates on an empty answer and on overload', async () => {
    const { u, p, w } = await setup({ worker: { role: 'developer', model: 'claude-opus-4-7' } });
    await t.db
      .updateTable('projects')
      .set({ config: JSON.stringify({ modelMode: 'optimize' }) })
      .where('id', '=', p.id)
      .execute();
    const before = s.modelCalls().length;
    s.enqueue(
      { content: [] },
      { status: 529, errorType: 'overloaded_error' },
      { status: 529, errorType: 'overloaded_error' },
      { content: [{ type: 'text', text: 'answer' }] },
    );
    const r = await message(p.name, u.token, { worker_id: w.id, text: 'hard question' });
    const run = await waitRun(t, p.name, r.body.run_ids[0], u.token);
    expect(run).toMatchObject({
      status: 'succeeded',
      reply: 'answer',
      cascade: true,
      turns: 1,
      model: 'claude-opus-4-7',
    });
    expect(callsSince(before).map((c) => c.body.model)).toEqual([
      'claude-haiku-4-5',
      'claude-sonnet-4-6',
      'claude-sonnet-4-6',
      'claude-opus-4-7',
    ]);
    const ev = await t.db
      .selectFrom('activity_log')
      .select(['type', 'payload'])
      .where('worker_id', '=', w.id)
      .where('type', 'like', 'cascade_%')
      .orderBy('id')
      .execute();
    expect(ev.map((e) => [e.type, (e.payload as any).class ?? (e.payload as any).tier])).toEqual([
      ['cascade_applied', 'fast'],
      ['cascade_escalated', 'empty_answer'],
      ['cascade_escalated', 'overloaded'],
    ]);
    // The per-message model beats the project's mode: no cascade.
    const before2 = s.modelCalls().length;
    const r2 = await message(p.name, u.token, { worker_id: w.id, text: 'quick', model: 'balanced' });
    expect(await waitRun(t, p.name, r2.body.run_ids[0], u.token)).toMatchObject({
      status: 'succeeded',
      cascade: false,
    });
    expect(callsSince(before2)[0].body.model).toBe('claude-sonnet-4-6');
  });

  it('uses the worker model in strict mode and fails on overload without escalating', async () => {
    const { u, p, w } = await setup({ worker: { model: 'claude-haiku-4-5', role: 'developer' } });
    s.enqueue({ status: 529, errorType: 'overloaded_error' }, { status: 529, errorType: 'overloaded_error' });
    const r = await message(p.name, u.token, { worker_id: w.id, text: 'x' });
    const run = await waitRun(t, p.name, r.body.run_ids[0], u.token);
    expect(run).toMatchObject({ status: 'failed', error: 'llm_overloaded', cascade: false, model: 'claude-haiku-4-5' });
  });
});

describe('cancel, restart and crash reconciliation', () => {
  it('cancels a running run: the model call is aborted and the worker goes idle', async () => {
    const { u, p, w } = await setup();
    s.respond(() => ({ delayMs: 4000, content: [{ type: 'text', text: 'late' }] }));
    const r = await message(p.name, u.token, { worker_id: w.id, text: 'slow' });
    const id = r.body.run_ids[0];
    await waitFor(
      async () =>
        (await api(t.app, 'GET', `/api/crm/projects/${p.name}/runs/${id}`, { token: u.token })).body.status ===
        'running',
    );
    await waitFor(
      async () =>
        (await t.db.selectFrom('workers').select('status').where('id', '=', w.id).executeTakeFirstOrThrow()).status ===
        'working',
    );
    const c = await api(t.app, 'POST', `/api/crm/projects/${p.name}/runs/${id}/cancel`, { token: u.token });
    expect(c.status).toBe(200);
    const run = await waitRun(t, p.name, id, u.token, 3000);
    expect(run.status).toBe('cancelled');
    expect(
      (await t.db.selectFrom('workers').select('status').where('id', '=', w.id).executeTakeFirstOrThrow()).status,
    ).toBe('idle');
    const again = await api(t.app, 'POST', `/api/crm/projects/${p.name}/runs/${id}/cancel`, { token: u.token });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('run_not_active');
  });

  it('restart stops the running run of a worker', async () => {
    const { u, p, w } = await setup();
    s.respond(() => ({ delayMs: 4000, content: [{ type: 'text', text: 'late' }] }));
    const r = await message(p.name, u.token, { worker_id: w.id, text: 'slow' });
    const id = r.body.run_ids[0];
    await waitFor(
      async () =>
        (await api(t.app, 'GET', `/api/crm/projects/${p.name}/runs/${id}`, { token: u.token })).body.status ===
        'running',
    );
    const res = await api(t.app, 'POST', `/api/crm/projects/${p.name}/restart?worker_id=${w.id}`, { token: u.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, worker_ids: [w.id], cancelled: [id] });
    expect((await waitRun(t, p.name, id, u.token, 3000)).status).toBe('cancelled');
    expect(
      (await api(t.app, 'POST', `/api/crm/projects/${p.name}/restart?worker_id=999999`, { token: u.token })).status,
    ).toBe(404);
  });

  it('at start requeues a run that died before its first turn and fails one that died later', async () => {
    const { u, p, w } = await setup();
    const old = new Date(Date.now() - 20 * 60_000);
    const msg = await t.db
      .insertInto('chat_messages')
      .values({
        project_id: p.id,
        user_id: u.id,
        worker_id: w.id,
        recipients: JSON.stringify([w.id]),
        role: 'user',
        content: 'before the crash',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const mk = (turns: number) =>
      t.db
        .insertInto('agent_runs')
        .values({
          project_id: p.id,
          user_id: u.id,
          worker_id: w.id,
          message_id: msg.id,
          status: 'running',
          turns,
          started_at: old,
          heartbeat_at: old,
          created_at: old,
          instance_id: 'dead',
        })
        .returning('id')
        .executeTakeFirstOrThrow();
    const early = await mk(0);
    const late = await mk(2);
    await t.db
      .updateTable('workers')
      .set({ status: 'working', status_started_at: old })
      .where('id', '=', w.id)
      .execute();
    expect(reportedWorkerStatus({ status: 'working', status_started_at: old }, false)).toBe('idle');
    expect(reportedWorkerStatus({ status: 'working', status_started_at: old }, true)).toBe('working');
    expect(reportedWorkerStatus({ status: 'working', status_started_at: new Date() }, false)).toBe('working');
    s.respond(() => ({ content: [{ type: 'text', text: 'recovered' }] }));
    // A second process starting over the same database reconciles on ready.
    const deps2 = createDeps(t.config, t.database, TEST_KEYS, silentLogger);
    const app2 = await buildApp(deps2);
    await app2.ready();
    try {
      const a = await waitRun(t, p.name, early.id, u.token);
      expect(a).toMatchObject({ status: 'succeeded', reply: 'recovered' });
      const b = await waitRun(t, p.name, late.id, u.token);
      expect(b).toMatchObject({ status: 'failed', error: 'interrupted' });
      expect(
        (await t.db.selectFrom('workers').select('status').where('id', '=', w.id).executeTakeFirstOrThrow()).status,
      ).toBe('idle');
      // A duplicate delivery of a finished run's job does nothing.
      await t.deps.jobs.send('runtime.run', { run_id: early.id });
      await new Promise((res) => setTimeout(res, 300));
      expect(
        (await t.db.selectFrom('chat_messages').select('id').where('run_id', '=', early.id).execute()).length,
      ).toBe(1);
    } finally {
      await app2.close();
    }
  });
});

describe('GET /projects/:name/runs', () => {
  it('lists runs newest first, paged by before/next_before, filtered by worker and status', async () => {
    const { u, p, w } = await setup();
    const w2 = await createWorker(t, p.id, { label: 'Second' });
    const ids: number[] = [];
    for (const [worker, text] of [
      [w.id, 'one'],
      [w2.id, 'two'],
      [w.id, 'three'],
      [w.id, 'four'],
    ] as const) {
      const r = await message(p.name, u.token, { worker_id: worker, text });
      ids.push(r.body.run_ids[0]);
      await waitRun(t, p.name, r.body.run_ids[0], u.token);
    }
    await t.db.updateTable('agent_runs').set({ status: 'failed', error: 'x' }).where('id', '=', ids[2]).execute();
    const url = `/api/crm/projects/${p.name}/runs`;
    const all = await api(t.app, 'GET', url, { token: u.token });
    expect(all.status).toBe(200);
    expect(all.body.runs.map((r: any) => r.id)).toEqual([...ids].reverse());
    expect(all.body.next_before).toBeNull();
    expect(all.body.runs[0]).toMatchObject({ worker_id: w.id, status: 'succeeded', reply: 'ok' });
    // Pages of two: the cursor walks back to the oldest, then ends.
    const first = await api(t.app, 'GET', `${url}?limit=2`, { token: u.token });
    expect(first.body.runs.map((r: any) => r.id)).toEqual([ids[3], ids[2]]);
    expect(first.body.next_before).toBe(ids[2]);
    const second = await api(t.app, 'GET', `${url}?limit=2&before=${first.body.next_before}`, { token: u.token });
    expect(second.body.runs.map((r: any) => r.id)).toEqual([ids[1], ids[0]]);
    expect(second.body.next_before).toBeNull();
    // Filters.
    const mine = await api(t.app, 'GET', `${url}?worker_id=${w2.id}`, { token: u.token });
    expect(mine.body.runs.map((r: any) => r.id)).toEqual([ids[1]]);
    const failed = await api(t.app, 'GET', `${url}?status=failed&worker_id=${w.id}`, { token: u.token });
    expect(failed.body.runs.map((r: any) => r.id)).toEqual([ids[2]]);
    // Another project's runs never appear.
    const { u: u2, p: p2 } = await setup();
    expect((await api(t.app, 'GET', `/api/crm/projects/${p2.name}/runs`, { token: u2.token })).body.runs).toEqual([]);
  });

  it('answers 401, 403, 404 and 400 as the other routes do', async () => {
    const { u, p } = await setup();
    const other = await createUser(t);
    const url = `/api/crm/projects/${p.name}/runs`;
    expect((await api(t.app, 'GET', url)).status).toBe(401);
    const f = await api(t.app, 'GET', url, { token: other.token });
    expect(f.status).toBe(403);
    expect(f.body.error).toBe('forbidden');
    expect((await api(t.app, 'GET', '/api/crm/projects/no-such-project/runs', { token: u.token })).status).toBe(404);
    const nw = await api(t.app, 'GET', `${url}?worker_id=987654`, { token: u.token });
    expect(nw.status).toBe(404);
    expect(nw.body.error).toBe('worker_not_found');
    for (const q of ['limit=0', 'limit=201', 'before=0', 'before=x', 'status=done', 'worker_id=-1']) {
      const b = await api(t.app, 'GET', `${url}?${q}`, { token: u.token });
      expect(b.status, q).toBe(400);
      expect(b.body.error).toBe('invalid_request');
    }
    expect((await api(t.app, 'GET', `${url}?limit=200`, { token: u.token })).status).toBe(200);
  });
});

describe('generate-prompt', () => {
  it('writes a system prompt from a role description and meters the call', async () => {
    const { u, p } = await setup();
    s.enqueue({
      content: [{ type: 'text', text: 'You are the release manager.' }],
      usage: { input_tokens: 40, output_tokens: 8 },
    });
    const before = s.modelCalls().length;
    const r = await api(t.app, 'POST', `/api/crm/projects/${p.name}/workers/generate-prompt`, {
      token: u.token,
      body: { role: 'ships releases', label: 'Rel', description: 'Never tags a release on a Friday.' },
    });
    expect(r.status).toBe(200);
    // What the worker is for, its name and the description all reach the model.
    const [call] = callsSince(before);
    const asked = JSON.stringify(call.body.messages);
    expect(asked).toContain('What the worker is for: ships releases');
    expect(asked).toContain('Worker: Rel');
    expect(asked).toContain('Never tags a release on a Friday.');
    expect(r.body).toMatchObject({
      system_prompt: 'You are the release manager.',
      usage: { input_tokens: 40, output_tokens: 8, total_tokens: 48 },
    });
    const row = await t.db
      .selectFrom('token_usage')
      .selectAll()
      .where('project_id', '=', p.id)
      .where('source', '=', 'generate_prompt')
      .executeTakeFirstOrThrow();
    expect(row.total_tokens).toBe(48);
    s.enqueue({ status: 500 }, { status: 500 });
    const bad = await api(t.app, 'POST', `/api/crm/projects/${p.name}/workers/generate-prompt`, {
      token: u.token,
      body: { role: 'ships releases' },
    });
    expect(bad.status).toBe(502);
    expect(bad.body.error).toBe('llm_error');
  });
});

describe('access and validation', () => {
  it('answers 401 without a token, 403 on another user’s project and 400 on bad input for every route', async () => {
    const { u, p, w } = await setup();
    const other = await createUser(t);
    const msg = await message(p.name, u.token, { worker_id: w.id, text: 'hi' });
    const runId = msg.body.run_ids[0];
    await waitRun(t, p.name, runId, u.token);
    const routes: Array<[string, string, unknown, string, unknown]> = [
      [
        'POST',
        `/api/crm/projects/${p.name}/message`,
        { worker_id: w.id, text: 'x' },
        `/api/crm/projects/${p.name}/message`,
        { worker_id: w.id },
      ],
      [
        'GET',
        `/api/crm/projects/${p.name}/runs/${runId}`,
        undefined,
        `/api/crm/projects/${p.name}/runs/abc`,
        undefined,
      ],
      [
        'POST',
        `/api/crm/projects/${p.name}/runs/${runId}/cancel`,
        undefined,
        `/api/crm/projects/${p.name}/runs/0/cancel`,
        undefined,
      ],
      [
        'POST',
        `/api/crm/projects/${p.name}/runs/${runId}/retry`,
        undefined,
        `/api/crm/projects/${p.name}/runs/-1/retry`,
        undefined,
      ],
      [
        'POST',
        `/api/crm/projects/${p.name}/restart?worker_id=${w.id}`,
        undefined,
        `/api/crm/projects/${p.name}/restart?worker_id=x`,
        undefined,
      ],
      [
        'POST',
        `/api/crm/projects/${p.name}/workers/generate-prompt`,
        { role: 'helps' },
        `/api/crm/projects/${p.name}/workers/generate-prompt`,
        { role: 'helps', description: 'd'.repeat(4001) },
      ],
    ];
    for (const [method, url, body, badUrl, badBody] of routes) {
      expect((await api(t.app, method as any, url, { body })).status, `${method} ${url} 401`).toBe(401);
      const f = await api(t.app, method as any, url, { token: other.token, body });
      expect(f.status, `${method} ${url} 403`).toBe(403);
      expect(f.body.error).toBe('forbidden');
      const b = await api(t.app, method as any, badUrl, { token: u.token, body: badBody });
      expect(b.status, `${method} ${badUrl} 400`).toBe(400);
      expect(b.body.error).toBe('invalid_request');
    }
    const shortRole = await api(t.app, 'POST', `/api/crm/projects/${p.name}/workers/generate-prompt`, {
      token: u.token,
      body: { role: 'x' },
    });
    expect(shortRole.status).toBe(400);
    expect((await message('no-such-project', u.token, { worker_id: w.id, text: 'x' })).status).toBe(404);
    expect((await message(p.name, u.token, { text: 'x' })).status).toBe(400);
    expect((await message(p.name, u.token, { worker_id: 987654, text: 'x' })).body.error).toBe('worker_not_found');
    expect((await api(t.app, 'GET', `/api/crm/projects/${p.name}/runs/987654`, { token: u.token })).body.error).toBe(
      'run_not_found',
    );
  });
});
