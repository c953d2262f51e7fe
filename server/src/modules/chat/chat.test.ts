import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, buildTestApp, createProject, createUser, type TestApp } from '../../../test/helpers.ts';
import { startLlmStandIn } from '../../../test/standins/llm.ts';
import { createWorker, giveKey } from '../../../test/runtime-fixtures.ts';

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

async function setup() {
  const u = await createUser(t);
  const p = await createProject(t, u.id);
  await giveKey(t, u.id);
  const w1 = await createWorker(t, p.id, { label: 'Lead', role: 'pm' });
  const w2 = await createWorker(t, p.id, { label: 'Dev', role: 'developer' });
  return { u, p, w1, w2 };
}

/** Parse an SSE body into events. */
function parseSse(text: string) {
  return text
    .split('\n\n')
    .filter((b) => b.includes('event: '))
    .map((b) => {
      const event = /^event: (.*)$/m.exec(b)![1];
      const data = JSON.parse(/^data: (.*)$/m.exec(b)![1]);
      return { event, data };
    });
}

describe('chat over SSE', () => {
  it('streams text deltas, tool results and done, and records both messages', async () => {
    const { u, p, w1, w2 } = await setup();
    s.enqueue(
      {
        content: [
          { type: 'text', text: 'Filing it now.' },
          { type: 'tool_use', name: 'create_issue', input: { title: 'Broken link', priority: 'P2' } },
        ],
        usage: { input_tokens: 30, output_tokens: 6 },
      },
      {
        content: [{ type: 'text', text: 'Created the issue for you.' }],
        usage: { input_tokens: 40, output_tokens: 9 },
      },
    );
    const before = s.modelCalls().length;
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/crm/projects/${p.name}/chat`,
      headers: { authorization: `Bearer ${u.token}` },
      payload: { text: 'the footer link is broken', worker_id: w2.id },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = parseSse(res.body);
    const deltas = events.filter((e) => e.event === 'text_delta').map((e) => e.data.delta);
    expect(deltas.length).toBeGreaterThan(2);
    expect(deltas.join('')).toBe('Filing it now.Created the issue for you.');
    const tool = events.find((e) => e.event === 'tool_result')!;
    expect(tool.data).toMatchObject({ tool: 'create_issue', is_error: false, title: 'Broken link', priority: 'P2' });
    const filed = await t.db
      .selectFrom('issues')
      .select('title')
      .where('project_id', '=', p.id)
      .where('number', '=', tool.data.issue_id as number)
      .executeTakeFirst();
    expect(filed?.title).toBe('Broken link');
    const done = events.at(-1)!;
    expect(done.event).toBe('done');
    expect(done.data).toMatchObject({
      status: 'succeeded',
      usage: { input_tokens: 70, output_tokens: 15, total_tokens: 85 },
      error: null,
    });
    expect(s.modelCalls().slice(before)[0].body.stream).toBe(true);
    const hist = await api(t.app, 'GET', `/api/crm/projects/${p.name}/chat/history?worker_id=${w2.id}`, {
      token: u.token,
    });
    expect(hist.body.messages.map((m: any) => [m.role, m.worker_id, m.content])).toEqual([
      ['user', w2.id, 'the footer link is broken'],
      ['assistant', w2.id, 'Filing it now.\n\nCreated the issue for you.'],
    ]);
    expect(hist.body.messages[1].id).toBe(done.data.message_id);
    expect(hist.body.messages[0].id).toBe(done.data.user_message_id);
    // The other worker's history is empty.
    expect(
      (await api(t.app, 'GET', `/api/crm/projects/${p.name}/chat/history?worker_id=${w1.id}`, { token: u.token })).body
        .messages,
    ).toEqual([]);
  });

  it('talks to the active role by default and ends with done on a failed run', async () => {
    const { u, p, w2 } = await setup();
    const before = s.modelCalls().length;
    expect((await api(t.app, 'GET', `/api/crm/projects/${p.name}/active-role`, { token: u.token })).body).toMatchObject(
      { role: 'pm' },
    );
    const set = await api(t.app, 'POST', `/api/crm/projects/${p.name}/active-role`, {
      token: u.token,
      body: { worker_id: w2.id },
    });
    expect(set.body).toEqual({ worker_id: w2.id, role: 'developer' });
    expect((await api(t.app, 'GET', `/api/crm/projects/${p.name}/active-role`, { token: u.token })).body).toEqual({
      worker_id: w2.id,
      role: 'developer',
    });
    s.enqueue({ status: 400, errorType: 'invalid_request_error' });
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/crm/projects/${p.name}/chat`,
      headers: { authorization: `Bearer ${u.token}` },
      payload: { text: 'hello' },
    });
    const events = parseSse(res.body);
    expect(events.at(-1)).toMatchObject({
      event: 'done',
      data: { status: 'failed', error: 'llm_invalid_request', message_id: null },
    });
    expect(s.modelCalls().slice(before)[0].body.system).toContain('Dev');
    const runs = await t.db.selectFrom('agent_runs').select('worker_id').where('project_id', '=', p.id).execute();
    expect(runs).toEqual([{ worker_id: w2.id }]);
  });

  it('refuses before streaming: 429 on a spent budget, 400 without workers', async () => {
    const { u, p, w1 } = await setup();
    await t.db
      .insertInto('token_usage')
      .values({ user_id: u.id, project_id: p.id, worker_id: w1.id, total_tokens: 100_000 })
      .execute();
    const r = await api(t.app, 'POST', `/api/crm/projects/${p.name}/chat`, {
      token: u.token,
      body: { text: 'hi', worker_id: w1.id },
    });
    expect(r.status).toBe(429);
    expect(r.body.error).toBe('token_budget_exceeded');
    const empty = await createProject(t, u.id);
    const r2 = await api(t.app, 'POST', `/api/crm/projects/${empty.name}/chat`, {
      token: u.token,
      body: { text: 'hi' },
    });
    expect(r2.status).toBe(400);
    expect(r2.body.error).toBe('no_worker');
    expect((await api(t.app, 'GET', `/api/crm/projects/${empty.name}/active-role`, { token: u.token })).body).toEqual({
      worker_id: null,
      role: null,
    });
  });
});

describe('following a run (re-attach)', () => {
  it('sends a snapshot, then the events of a run going on, and done with the whole reply; a run that ended gets done at once', async () => {
    const { u, p, w1 } = await setup();
    s.enqueue(
      {
        content: [
          { type: 'text', text: 'Filing it now.' },
          { type: 'tool_use', name: 'create_issue', input: { title: 'Follow me' } },
        ],
        usage: { input_tokens: 10, output_tokens: 5 },
      },
      { content: [{ type: 'text', text: 'Done.' }], usage: { input_tokens: 10, output_tokens: 5 }, delayMs: 400 },
    );
    const sent = await api(t.app, 'POST', `/api/crm/projects/${p.name}/message`, {
      token: u.token,
      body: { worker_id: w1.id, text: 'file it' },
    });
    expect(sent.status).toBe(202);
    const runId = sent.body.run_ids[0];
    const url = `/api/crm/projects/${p.name}/runs/${runId}/events`;
    const res = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${u.token}` } });
    expect(res.statusCode).toBe(200);
    const events = parseSse(res.body);
    expect(events[0].event).toBe('snapshot');
    expect(events[0].data).toMatchObject({ run_id: runId });
    const done = events.at(-1)!;
    expect(done.event).toBe('done');
    expect(done.data).toMatchObject({ run_id: runId, status: 'succeeded', reply: 'Filing it now.\n\nDone.' });
    // Again after the end: the snapshot holds the reply, done follows at once.
    const again = parseSse(
      (await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${u.token}` } })).body,
    );
    expect(again.map((e) => e.event)).toEqual(['snapshot', 'done']);
    expect(again[0].data).toMatchObject({ status: 'succeeded', text: 'Filing it now.\n\nDone.' });
    expect(again[0].data.tool_calls[0]).toMatchObject({ tool: 'create_issue', is_error: false });
    // Another user's project, an unknown run: refused before streaming.
    const other = await createUser(t);
    const foreign = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${other.token}` } });
    expect([403, 404]).toContain(foreign.statusCode);
    const unknown = await api(t.app, 'GET', `/api/crm/projects/${p.name}/runs/999999/events`, { token: u.token });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('run_not_found');
  });
});

describe('chat history paging', () => {
  it('pages back with before, oldest first within a page', async () => {
    const { u, p, w1, w2 } = await setup();
    const ids: number[] = [];
    for (let i = 1; i <= 7; i++) {
      const row = await t.db
        .insertInto('chat_messages')
        .values({
          project_id: p.id,
          user_id: u.id,
          worker_id: i === 4 ? null : w1.id,
          recipients: JSON.stringify(i === 4 ? [w1.id, w2.id] : [w1.id]),
          role: i % 2 ? 'user' : 'assistant',
          content: `m${i}`,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      ids.push(row.id);
    }
    const page = (q: string) => api(t.app, 'GET', `/api/crm/projects/${p.name}/chat/history?${q}`, { token: u.token });
    const p1 = await page('limit=3');
    expect(p1.body.messages.map((m: any) => m.content)).toEqual(['m5', 'm6', 'm7']);
    expect(p1.body.has_more).toBe(true);
    const p2 = await page(`limit=3&before=${p1.body.messages[0].id}`);
    expect(p2.body.messages.map((m: any) => m.content)).toEqual(['m2', 'm3', 'm4']);
    const p3 = await page(`limit=3&before=${p2.body.messages[0].id}`);
    expect(p3.body).toMatchObject({ messages: [{ content: 'm1', role: 'user', worker_id: w1.id }], has_more: false });
    // The parallel message shows in both workers' histories.
    expect((await page(`worker_id=${w2.id}`)).body.messages.map((m: any) => m.content)).toEqual(['m4']);
    expect((await page('')).body.messages).toHaveLength(7);
  });
});

describe('access and validation', () => {
  it('answers 401, 403 and 400 on every chat route', async () => {
    const { u, p, w1 } = await setup();
    const other = await createUser(t);
    const routes: Array<[string, string, unknown, string, unknown]> = [
      ['POST', `/api/crm/projects/${p.name}/chat`, { text: 'x' }, `/api/crm/projects/${p.name}/chat`, { text: '' }],
      [
        'GET',
        `/api/crm/projects/${p.name}/chat/history`,
        undefined,
        `/api/crm/projects/${p.name}/chat/history?limit=500`,
        undefined,
      ],
      ['GET', `/api/crm/projects/${p.name}/active-role`, undefined, '', undefined],
      [
        'POST',
        `/api/crm/projects/${p.name}/active-role`,
        { worker_id: w1.id },
        `/api/crm/projects/${p.name}/active-role`,
        { worker_id: 'x' },
      ],
    ];
    for (const [method, url, body, badUrl, badBody] of routes) {
      expect((await api(t.app, method as any, url, { body })).status, `${method} ${url}`).toBe(401);
      expect((await api(t.app, method as any, url, { token: other.token, body })).status, `${method} ${url}`).toBe(403);
      if (badUrl)
        expect(
          (await api(t.app, method as any, badUrl, { token: u.token, body: badBody })).body.error,
          `${method} ${badUrl}`,
        ).toBe('invalid_request');
    }
    expect(
      (
        await api(t.app, 'POST', `/api/crm/projects/${p.name}/active-role`, {
          token: u.token,
          body: { worker_id: 999999 },
        })
      ).status,
    ).toBe(404);
    expect(
      (await api(t.app, 'GET', `/api/crm/projects/${p.name}/chat/history?before=0`, { token: u.token })).status,
    ).toBe(400);
  });
});
