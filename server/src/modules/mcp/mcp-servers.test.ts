/**
 * Workers' outside MCP servers against a small MCP server the test starts (server/test/standins/mcp-server.ts):
 * registration (tools listed, headers sealed, outbound rules), the worker's `mcp_servers`, and a run whose model
 * calls the server's tools as `<server>__<tool>`, bounded in time and size and logged in the run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, buildTestApp, createProject, createUser, type TestApp } from '../../../test/helpers.ts';
import { createWorker, giveKey, waitRun } from '../../../test/runtime-fixtures.ts';
import { startLlmStandIn } from '../../../test/standins/llm.ts';
import { startMcpStandIn } from '../../../test/standins/mcp-server.ts';

let t: TestApp;
let llm: Awaited<ReturnType<typeof startLlmStandIn>>;
let mcp: Awaited<ReturnType<typeof startMcpStandIn>>;
let u: Awaited<ReturnType<typeof createUser>>;
let p: Awaited<ReturnType<typeof createProject>>;
const base = () => `/api/crm/projects/${p.name}/mcp-servers`;

beforeAll(async () => {
  llm = await startLlmStandIn();
  mcp = await startMcpStandIn({ apiKey: 'k-secret-123' });
  t = await buildTestApp({
    env: {
      LLM_PROVIDER: 'anthropic',
      LLM_BASE_URL: llm.anthropicUrl,
      // The stand-in listens on loopback: allowed by address, as an operator would allow an intranet host.
      OUTBOUND_ALLOW_PRIVATE: '127.0.0.1',
      MCP_CALL_TIMEOUT_MS: '1500',
      MCP_RESULT_MAX_CHARS: '300',
    },
  });
  u = await createUser(t);
  await giveKey(t, u.id);
  p = await createProject(t, u.id, 'mcp-tools');
});
afterAll(async () => {
  await t?.close();
  await llm?.close();
  await mcp?.close();
});

describe("a project's outside MCP servers", () => {
  it('registers a server: lists its tools, keeps the headers sealed and never shows them', async () => {
    const r = await api(t.app, 'POST', base(), {
      token: u.token,
      body: { name: 'tools', url: mcp.url, headers: { 'x-api-key': 'k-secret-123' } },
    });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.any(Number),
      name: 'tools',
      url: mcp.url,
      tools: ['echo', 'slow', 'big', 'fail'],
    });
    const list = await api(t.app, 'GET', base(), { token: u.token });
    expect(list.body.servers).toEqual([
      expect.objectContaining({ name: 'tools', header_names: ['x-api-key'], tools: ['echo', 'slow', 'big', 'fail'] }),
    ]);
    expect(list.text).not.toContain('k-secret-123');
    const row = await t.db.selectFrom('mcp_servers').selectAll().executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain('k-secret-123');
    expect((await api(t.app, 'POST', base(), { token: u.token, body: { name: 'tools', url: mcp.url } })).status).toBe(
      409,
    );
    // Without the key the server answers 401: no MCP server there for us.
    const keyless = await api(t.app, 'POST', base(), { token: u.token, body: { name: 'nokey', url: mcp.url } });
    expect([keyless.status, keyless.body.error]).toEqual([502, 'mcp_server_unreachable']);
  });

  it('refuses private, loopback and metadata addresses outside the allow-list without contacting them', async () => {
    const before = mcp.requests();
    for (const url of [
      `http://[::1]:${mcp.port}/mcp`,
      'http://10.0.0.1/mcp',
      'http://169.254.169.254/latest',
      'ftp://example.com/mcp',
    ]) {
      const r = await api(t.app, 'POST', base(), { token: u.token, body: { name: 'bad', url } });
      expect([url, r.status, r.body.error]).toEqual([url, 400, 'mcp_server_refused']);
      expect(r.text).not.toContain(url);
    }
    expect(mcp.requests()).toBe(before);
    const other = await createUser(t);
    expect((await api(t.app, 'GET', base(), { token: other.token })).status).toBe(403);
  });

  it("a worker's run calls the server's tools as <server>__<tool>: bounded, logged, counted in turns", async () => {
    const w = await createWorker(t, p.id, { label: 'Researcher' });
    const bad = await api(t.app, 'PUT', `/api/crm/projects/${p.name}/workers/${w.id}`, {
      token: u.token,
      body: { mcp_servers: ['nope'] },
    });
    expect([bad.status, bad.body.error]).toEqual([400, 'unknown_mcp_server']);
    const put = await api(t.app, 'PUT', `/api/crm/projects/${p.name}/workers/${w.id}`, {
      token: u.token,
      body: { mcp_servers: ['tools'] },
    });
    expect(put.body.mcp_servers).toEqual(['tools']);

    const use = (name: string, input: Record<string, unknown>) => ({
      content: [{ type: 'tool_use' as const, name, input }],
    });
    llm.enqueue(
      use('tools__echo', { text: 'hello' }),
      use('tools__slow', { ms: 4000 }),
      use('tools__big', { chars: 5000 }),
      use('tools__fail', {}),
      { content: [{ type: 'text', text: 'All done.' }] },
    );
    const calls = llm.modelCalls().length;
    const sent = await api(t.app, 'POST', `/api/crm/projects/${p.name}/message`, {
      token: u.token,
      body: { worker_id: w.id, text: 'Use your tools.' },
    });
    expect(sent.status).toBe(202);
    const run = await waitRun(t, p.name, sent.body.run_ids[0], u.token, 30_000);
    expect(run.status).toBe('succeeded');
    expect(run.turns).toBe(5);
    expect(run.tool_calls.map((c: { tool: string; is_error: boolean }) => [c.tool, c.is_error])).toEqual([
      ['tools__echo', false],
      ['tools__slow', true],
      ['tools__big', false],
      ['tools__fail', true],
    ]);

    const model = llm.modelCalls().slice(calls);
    const offered = model[0].body.tools.map((x: { name: string }) => x.name);
    expect(offered).toEqual(expect.arrayContaining(['tools__echo', 'tools__slow', 'tools__big', 'tools__fail']));
    expect(model[0].body.tools.find((x: { name: string }) => x.name === 'tools__echo').input_schema).toMatchObject({
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
    });
    const resultOf = (i: number) => JSON.stringify(model[i].body.messages.at(-1).content);
    expect(resultOf(1)).toContain('echo: hello');
    expect(resultOf(2)).toContain('did not answer slow in time');
    expect(resultOf(3)).toContain('cut at 300 characters of 5000');
    expect(resultOf(4)).toContain('it broke');
    // The key reached the server; each call is in the activity log.
    expect(mcp.headers().some((h) => h['x-api-key'] === 'k-secret-123')).toBe(true);
    const events = await t.db
      .selectFrom('activity_log')
      .select(['title', 'payload'])
      .where('type', '=', 'mcp_tool_call')
      .where('worker_id', '=', w.id)
      .orderBy('id')
      .execute();
    expect(events.map((e) => e.title)).toEqual(['tools: echo', 'tools: slow', 'tools: big', 'tools: fail']);
    expect(events[2].payload).toMatchObject({ server: 'tools', tool: 'big', truncated: true, chars: 5000 });
  });

  it('deletes a server; a worker naming it gets no tools from it', async () => {
    const { servers } = (await api(t.app, 'GET', base(), { token: u.token })).body;
    expect((await api(t.app, 'DELETE', `${base()}/${servers[0].id}`, { token: u.token })).body).toEqual({ ok: true });
    expect((await api(t.app, 'DELETE', `${base()}/${servers[0].id}`, { token: u.token })).status).toBe(404);
    const w = await createWorker(t, p.id, { label: 'Plain' });
    await t.db
      .updateTable('workers')
      .set({ mcp_servers: JSON.stringify(['tools']) })
      .where('id', '=', w.id)
      .execute();
    llm.enqueue({ content: [{ type: 'text', text: 'ok' }] });
    const calls = llm.modelCalls().length;
    const sent = await api(t.app, 'POST', `/api/crm/projects/${p.name}/message`, {
      token: u.token,
      body: { worker_id: w.id, text: 'hi' },
    });
    expect((await waitRun(t, p.name, sent.body.run_ids[0], u.token)).status).toBe('succeeded');
    const names = (llm.modelCalls()[calls].body.tools ?? []).map((x: { name: string }) => x.name);
    expect(names.some((n: string) => n.startsWith('tools__'))).toBe(false);
  });
});
