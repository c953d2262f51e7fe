/**
 * The MCP server's address (docs/api.md, The MCP server): `POST /mcp` carries JSON-RPC messages of the Model
 * Context Protocol (Streamable HTTP transport, stateless, JSON answers); `GET` and `DELETE` answer 405 (no
 * server-sent stream, no sessions). The auth hook authenticates the caller; the tools check the token's scopes.
 */
import { Type } from 'typebox';
import { requireActor } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import { errors } from '../../http/schemas.ts';
import { applyHeaders } from '../../http/sse.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import type { McpService } from './mcp.service.ts';

export function mcpRoutes(app: TypedApp, { mcp }: { mcp: McpService }): void {
  const tags = ['mcp'];
  app.post(
    '/mcp',
    {
      // Scopes are checked per tool: a read-only token may still list and call the read tools.
      config: { accessToken: 'per-call' },
      schema: {
        tags,
        summary: 'The MCP server (Streamable HTTP): JSON-RPC requests of the Model Context Protocol',
        description:
          'Send `Authorization: Bearer <access token or session token>`, `Accept: application/json, ' +
          'text/event-stream` and one JSON-RPC message or a batch (`initialize`, `tools/list`, `tools/call`, ' +
          '`resources/list`, `resources/read`, …). Stateless: no `Mcp-Session-Id`. Tools: issues_list, ' +
          'issue_create, issue_take, issue_log, issue_close, wiki_read, wiki_write, search, note_ask, ' +
          'skills_list, skill_get, pins_list; resources `wiki://{project}/{path}` and `skill://{project}/{name}`. ' +
          'A tool the token’s scopes do not allow answers a tool error (`isError`), never a result.',
        body: Type.Unsafe<unknown>({ description: 'a JSON-RPC message or batch' }),
        response: {
          200: Type.Unsafe<unknown>({ description: 'the JSON-RPC answer (application/json)' }),
          202: Type.Unsafe<unknown>({ description: 'accepted (a notification or a response)' }),
          ...errors(400, 401, 403, 406, 415, 429, 503),
        },
      },
    },
    async (req, reply) => {
      const actor = requireActor(req);
      reply.hijack();
      applyHeaders(reply.raw, reply.getHeaders());
      await mcp.handle(actor, req.raw, reply.raw, req.body);
    },
  );
  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/mcp',
      config: { accessToken: 'per-call' },
      schema: {
        tags,
        summary: `${method} /mcp: not offered (no server-sent stream, no sessions); 405`,
        response: errors(401, 405),
      },
      handler: async (_req, reply) => {
        reply.header('allow', 'POST');
        throw new AppError(405, 'method_not_allowed', 'This MCP server is stateless: send POST requests only.');
      },
    });
  }
}
