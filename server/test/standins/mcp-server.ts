/**
 * A small MCP server over Streamable HTTP (the official SDK, stateless) for tests of workers' outside MCP tools:
 * `echo {text}`, `slow {ms}` (answers after `ms`), `big {chars}` (a long text), `fail` (a tool error). It
 * requires the header `x-api-key` when `apiKey` is given (401 otherwise) and counts the requests it received.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

function tools(): McpServer {
  const s = new McpServer({ name: 'test-tools', version: '1.0.0' });
  s.registerTool('echo', { description: 'Say the text back', inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: 'text', text: `echo: ${text}` }],
  }));
  s.registerTool(
    'slow',
    { description: 'Answer after ms milliseconds', inputSchema: { ms: z.number() } },
    async ({ ms }) => {
      await new Promise((r) => setTimeout(r, ms));
      return { content: [{ type: 'text', text: 'late' }] };
    },
  );
  s.registerTool('big', { description: 'A long text', inputSchema: { chars: z.number() } }, async ({ chars }) => ({
    content: [{ type: 'text', text: 'x'.repeat(chars) }],
  }));
  s.registerTool('fail', { description: 'Always fails' }, async () => ({
    content: [{ type: 'text', text: 'it broke' }],
    isError: true,
  }));
  return s;
}

export async function startMcpStandIn(opts: { apiKey?: string } = {}) {
  let requests = 0;
  const headers: http.IncomingHttpHeaders[] = [];
  const server = http.createServer(async (req, res) => {
    requests++;
    headers.push(req.headers);
    if (opts.apiKey && req.headers['x-api-key'] !== opts.apiKey) return res.writeHead(401).end('{"error":"key"}');
    if (req.method !== 'POST') return res.writeHead(405, { allow: 'POST' }).end();
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const s = tools();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void s.close();
    });
    await s.connect(transport);
    await transport.handleRequest(req, res, JSON.parse(Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    requests: () => requests,
    headers: () => headers,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
