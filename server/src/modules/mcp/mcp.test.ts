/**
 * The MCP server through the official SDK's own client over Streamable HTTP, against the running service
 * (listening on a local port): initialize, tools/list, every tool, resources, scope refusals, a project-bound
 * token, a revoked token, a session token.
 */
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, buildTestApp, createProject, createUser, type TestApp } from '../../../test/helpers.ts';
import { waitForIndex } from '../../../test/knowledge-helpers.ts';
import { giveKey } from '../../../test/runtime-fixtures.ts';
import { startLlmStandIn } from '../../../test/standins/llm.ts';
import { TOOL_SCOPES } from './mcp.server.ts';

let t: TestApp;
let llm: Awaited<ReturnType<typeof startLlmStandIn>>;
let url: string;
let u: Awaited<ReturnType<typeof createUser>>;
let p: Awaited<ReturnType<typeof createProject>>;
let other: Awaited<ReturnType<typeof createProject>>;
const clients: Client[] = [];

beforeAll(async () => {
  llm = await startLlmStandIn();
  t = await buildTestApp({ env: { LLM_PROVIDER: 'anthropic', LLM_BASE_URL: llm.anthropicUrl } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/mcp`;
  u = await createUser(t);
  await giveKey(t, u.id);
  p = await createProject(t, u.id, 'mcp-main');
  other = await createProject(t, u.id, 'mcp-other');
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await t?.close();
  await llm?.close();
});

const newToken = async (scopes: string[], project?: string) => {
  const r = await api(t.app, 'POST', '/api/crm/account/tokens', {
    token: u.token,
    body: { name: 'agent', scopes, project },
  });
  expect(r.status).toBe(201);
  return r.body as { id: number; token: string };
};

/** An SDK client connected (initialize done) with `token`. */
async function connect(token: string): Promise<Client> {
  const client = new Client({ name: 'crm-test-agent', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** Call a tool; the JSON of its text answer, or `{error}` (the text) for a tool error. */
async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const r = (await client.callTool({ name, arguments: args })) as {
    content: Array<{ type: string; text: string }>;
    isError?: boolean;
  };
  const text = r.content[0]?.text ?? '';
  return r.isError ? { error: text } : JSON.parse(text);
}

describe('the MCP server over Streamable HTTP', () => {
  it('a day of work on issues and the wiki with a read-write access token', async () => {
    const { token } = await newToken(['read', 'write']);
    const c = await connect(token);
    expect(c.getServerVersion()).toMatchObject({ name: 'crm-service' });
    expect(c.getServerCapabilities()).toMatchObject({ tools: {}, resources: {} });

    const { tools } = await c.listTools();
    expect(tools.map((x) => x.name).sort()).toEqual(Object.keys(TOOL_SCOPES).sort());
    expect(tools.find((x) => x.name === 'issue_create')!.inputSchema.required).toEqual(['title']);

    const made = await call(c, 'issue_create', { project: p.name, title: 'Fix the login', priority: 'P1' });
    expect(made).toMatchObject({ id: expect.any(Number), title: 'Fix the login', status: 'open', priority: 'P1' });
    const list = await call(c, 'issues_list', { project: p.name, status: 'open' });
    expect(list.issues.map((i: { id: number }) => i.id)).toContain(made.id);
    const taken = await call(c, 'issue_take', { project: p.name, id: made.id });
    expect(taken).toMatchObject({ status: 'in_progress', assignee: u.email });
    const entry = await call(c, 'issue_log', { project: p.name, id: made.id, message: 'found the cause' });
    expect(entry).toMatchObject({ kind: 'log', message: 'found the cause' });
    const closed = await call(c, 'issue_close', { project: p.name, id: made.id, message: 'fixed in abc123' });
    expect(closed.status).toBe('closed');
    expect(closed.activity.map((a: { message: string }) => a.message)).toContain('fixed in abc123');
    expect((await call(c, 'issue_close', { project: p.name, id: 9999 })).error).toMatch(/^issue_not_found:/);

    const saved = await call(c, 'wiki_write', {
      project: p.name,
      path: 'guides/release.md',
      content: '# Release\n\nThe pelican checklist comes first.',
    });
    expect(saved).toMatchObject({ path: 'guides/release.md', title: 'Release' });
    expect((await call(c, 'wiki_read', { project: p.name, path: 'guides/release.md' })).content).toContain('pelican');
    expect(JSON.stringify(await call(c, 'wiki_read', { project: p.name }))).toContain('guides/release.md');

    await waitForIndex(t.deps);
    const found = await call(c, 'search', { project: p.name, query: 'pelican checklist', k: 3 });
    expect(found.hits[0]).toMatchObject({
      source: { doc_type: 'wiki', doc_id: 'guides/release.md', title: 'Release' },
      location: { chunk_ix: 0 },
    });

    // The same project through the REST API sees what the agent did.
    const rest = await api(t.app, 'GET', `/api/crm/projects/${p.name}/issues/${made.id}`, { token: u.token });
    expect(rest.body.status).toBe('closed');
  });

  it('skills, pins, the note chat and the resources', async () => {
    const { token } = await newToken(['read', 'write']);
    const c = await connect(token);
    const sk = await api(t.app, 'POST', `/api/crm/projects/${p.name}/skills`, {
      token: u.token,
      body: { name: 'deploy', description: 'How we deploy', content: '# Deploy\n\nRun the pipeline.' },
    });
    expect(sk.status).toBe(201);
    const pin = await api(t.app, 'POST', `/api/crm/projects/${p.name}/pins`, {
      token: u.token,
      body: { text: 'Freeze on Fridays' },
    });
    expect(pin.status).toBe(201);

    const skills = await call(c, 'skills_list', { project: p.name });
    expect(skills.skills).toContainEqual({ id: sk.body.id, name: 'deploy', description: 'How we deploy' });
    expect((await call(c, 'skill_get', { project: p.name, name: 'deploy' })).content).toContain('Run the pipeline');
    expect((await call(c, 'skill_get', { project: p.name, name: 'nope' })).error).toMatch(/^skill_not_found/);
    expect((await call(c, 'pins_list', { project: p.name })).pins[0]).toMatchObject({ text: 'Freeze on Fridays' });

    const note = await api(t.app, 'POST', `/api/crm/projects/${p.name}/notes`, {
      token: u.token,
      body: { title: 'Market' },
    });
    llm.enqueue({ content: [{ type: 'text', text: 'No sources answer that yet.' }] });
    const asked = await call(c, 'note_ask', { project: p.name, note_id: note.body.id, question: 'Who buys?' });
    expect(asked).toMatchObject({ answer: 'No sources answer that yet.', message_id: expect.any(Number) });
    const metered = await t.db.selectFrom('token_usage').select('source').where('source', '=', 'note_chat').execute();
    expect(metered.length).toBeGreaterThan(0);

    const { resources } = await c.listResources();
    const uris = resources.map((r) => r.uri);
    expect(uris).toContain(`wiki://${p.name}/guides/release.md`);
    expect(uris).toContain(`skill://${p.name}/deploy`);
    const page = await c.readResource({ uri: `wiki://${p.name}/guides/release.md` });
    expect((page.contents[0] as { text: string }).text).toContain('pelican');
    const skill = await c.readResource({ uri: `skill://${p.name}/deploy` });
    expect((skill.contents[0] as { text: string }).text).toContain('Run the pipeline');
  });

  it('a read-only token bound to one project: read tools work, others are tool errors; no project needed', async () => {
    const { token } = await newToken(['read'], p.name);
    const c = await connect(token);
    expect((await c.listTools()).tools).toHaveLength(Object.keys(TOOL_SCOPES).length);
    expect((await call(c, 'issues_list')).issues.length).toBeGreaterThan(0);
    for (const [name, args] of [
      ['issue_create', { title: 'nope' }],
      ['issue_take', { id: 1 }],
      ['issue_log', { id: 1, message: 'x' }],
      ['issue_close', { id: 1 }],
      ['wiki_write', { path: 'x.md', content: 'x' }],
      ['note_ask', { note_id: 1, question: 'x' }],
    ] as const) {
      const r = await c.callTool({ name, arguments: args });
      expect([name, r.isError]).toEqual([name, true]);
      expect((r.content as Array<{ text: string }>)[0].text).toMatch(/^insufficient_scope: .*write scope/);
    }
    expect((await call(c, 'issues_list', { project: other.name })).error).toMatch(/^token_project:/);
    const unbound = await connect((await newToken(['read'])).token);
    expect((await call(unbound, 'issues_list')).error).toMatch(/^project_required:/);
  });

  it('a revoked token is refused at initialize; a session token works', async () => {
    const { id, token } = await newToken(['read', 'write']);
    await api(t.app, 'DELETE', `/api/crm/account/tokens/${id}`, { token: u.token });
    await expect(connect(token)).rejects.toThrow(/token_revoked/);
    const raw = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    });
    expect(raw.status).toBe(401);
    expect((await raw.json()).error).toBe('token_revoked');
    const session = await connect(u.token);
    expect((await call(session, 'issues_list', { project: p.name })).total).toBeGreaterThan(0);
    expect((await fetch(url, { headers: { authorization: `Bearer ${u.token}` } })).status).toBe(405);
  });

  it("the transport's own answers carry the request id and the security headers", async () => {
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${u.token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    });
    await res.arrayBuffer();
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
  });
});
