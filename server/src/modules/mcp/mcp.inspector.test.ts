/**
 * The MCP server through the MCP Inspector's command line (`@modelcontextprotocol/inspector --cli`, the protocol's
 * reference debugging client, a pinned dev dependency), as a person checks a server before giving it to an agent:
 * tools/list, tools/call with an access token in the Authorization header, and a revoked token refused.
 */
import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, buildTestApp, createProject, createUser, type TestApp } from '../../../test/helpers.ts';
import { TOOL_SCOPES } from './mcp.server.ts';

const run = promisify(execFile);
const inspector = path.resolve(import.meta.dirname, '../../../../node_modules/.bin/mcp-inspector');

let t: TestApp;
let url: string;
let u: Awaited<ReturnType<typeof createUser>>;
let p: Awaited<ReturnType<typeof createProject>>;

beforeAll(async () => {
  t = await buildTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/mcp`;
  u = await createUser(t);
  p = await createProject(t, u.id, 'mcp-inspected');
});
afterAll(async () => {
  await t?.close();
});

/** One Inspector CLI call against the service; its JSON output. */
async function cli(token: string, ...args: string[]): Promise<any> {
  const { stdout } = await run(
    inspector,
    ['--cli', url, '--transport', 'http', '--header', `Authorization: Bearer ${token}`, ...args],
    { timeout: 60_000, env: { ...process.env, HOME: t.dataDir, NO_COLOR: '1' } },
  );
  return JSON.parse(stdout);
}

describe('the MCP Inspector CLI against the service', () => {
  it('lists the tools, files and lists an issue with an access token; a revoked token is refused', async () => {
    const made = await api(t.app, 'POST', '/api/crm/account/tokens', {
      token: u.token,
      body: { name: 'inspector', scopes: ['read', 'write'], project: p.name },
    });
    expect(made.status).toBe(201);
    const token = made.body.token as string;

    const listed = await cli(token, '--method', 'tools/list');
    expect(listed.tools.map((x: { name: string }) => x.name).sort()).toEqual(Object.keys(TOOL_SCOPES).sort());

    const created = await cli(
      token,
      '--method',
      'tools/call',
      '--tool-name',
      'issue_create',
      '--tool-arg',
      'title=Checked with the Inspector',
    );
    expect(created.isError ?? false).toBe(false);
    const issue = JSON.parse(created.content[0].text);
    expect(issue).toMatchObject({ title: 'Checked with the Inspector', status: 'open' });

    const list = await cli(token, '--method', 'tools/call', '--tool-name', 'issues_list');
    expect(JSON.parse(list.content[0].text).issues.map((i: { id: number }) => i.id)).toContain(issue.id);

    expect((await api(t.app, 'DELETE', `/api/crm/account/tokens/${made.body.id}`, { token: u.token })).status).toBe(
      200,
    );
    await expect(cli(token, '--method', 'tools/list')).rejects.toThrow();
  }, 120_000);
});
