/** A project's outside MCP servers (docs/api.md, Outside MCP servers for workers): list, register, delete. */
import { requireActor } from '../../http/auth.ts';
import { errors, Ok, ProjectParam } from '../../http/schemas.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import type { McpServersService } from './mcp-servers.service.ts';
import * as S from './mcp.schemas.ts';

export function mcpServersRoutes(app: TypedApp, { mcpServers }: { mcpServers: McpServersService }): void {
  const tags = ['mcp', 'workers'];
  const base = '/api/crm/projects/:name/mcp-servers';
  app.get(
    base,
    {
      schema: {
        tags,
        summary: "The project's outside MCP servers (headers never shown)",
        params: ProjectParam,
        response: { 200: S.ServerList, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => mcpServers.list(requireActor(req), req.params.name),
  );
  app.post(
    base,
    {
      schema: {
        tags,
        summary: 'Register an outside MCP server for the project’s workers (connects once to list its tools)',
        description:
          'The address follows the outbound rules: private, loopback, link-local and metadata addresses are ' +
          'refused with 400 `mcp_server_refused` and never contacted, unless OUTBOUND_ALLOW_PRIVATE names them. ' +
          'The server is then asked for its tools (Streamable HTTP, `initialize` and `tools/list`); 502 ' +
          '`mcp_server_unreachable` when no MCP server answers. Headers are stored sealed. A worker uses the ' +
          'server when its `mcp_servers` names it; the tools reach the model as `<name>__<tool>`.',
        params: ProjectParam,
        body: S.CreateServerBody,
        response: { 201: S.CreatedServer, ...errors(400, 401, 403, 404, 409, 502) },
      },
    },
    async (req, reply) => reply.status(201).send(await mcpServers.create(requireActor(req), req.params.name, req.body)),
  );
  app.delete(
    `${base}/:id`,
    {
      schema: {
        tags,
        summary: 'Remove an outside MCP server (workers naming it no longer get its tools)',
        params: S.ServerParams,
        response: { 200: Ok, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => mcpServers.remove(requireActor(req), req.params.name, req.params.id),
  );
}
