/**
 * A project's outside MCP servers (docs/api.md, Outside MCP servers for workers): registered with a name, an
 * address and headers (sealed with the secret store's key, never answered); a worker uses those named in its
 * `mcp_servers`. Registration checks the address under the outbound rules first (a private, loopback or
 * metadata address is refused with 400 and never connected to, unless OUTBOUND_ALLOW_PRIVATE names it), then
 * connects and lists the server's tools.
 */
import type { Access } from '../../access/access.ts';
import type { Actor } from '../../http/auth.ts';
import { BadRequest, Conflict, NotFound, Upstream } from '../../http/errors.ts';
import { checkUrl, FetchRefused } from '../../lib/safe-fetch.ts';
import type { Sealer } from '../../secrets/crypto.ts';
import { connectMcp, type McpClientLimits, type McpConnection } from './mcp.client.ts';
import type { McpRepo } from './mcp.repo.ts';

/** Servers a project may register. */
export const SERVERS_MAX = 20;

export interface McpServersDeps {
  repo: McpRepo;
  access: Pick<Access, 'project'>;
  sealer: Pick<Sealer, 'seal'>;
  limits: McpClientLimits;
}

/** Whether `err` (or one of its causes) is an outbound refusal. */
function refused(err: unknown): boolean {
  for (let e: unknown = err, i = 0; e && i < 5; e = (e as { cause?: unknown }).cause, i++)
    if (e instanceof FetchRefused) return true;
  return false;
}

export function createMcpServersService(deps: McpServersDeps) {
  const { repo } = deps;

  const view = (r: Awaited<ReturnType<McpRepo['list']>>[number]) => ({
    id: r.id,
    name: r.name,
    url: r.url,
    header_names: r.header_names,
    tools: r.tools.map((t) => t.name),
    created_at: r.created_at,
    updated_at: r.updated_at,
  });

  return {
    /** GET /projects/:name/mcp-servers → `{servers:[{id, name, url, header_names, tools, created_at, updated_at}]}`. */
    async list(actor: Actor, name: string) {
      const p = await deps.access.project(actor, name);
      return { servers: (await repo.list(p.id)).map(view) };
    },

    /**
     * POST /projects/:name/mcp-servers `{name, url, headers?}` → `{id, name, url, tools:[name…]}` (201).
     * @throws 400 `mcp_server_refused` (an address the outbound rules refuse: nothing was sent to it);
     *   409 `mcp_server_exists` (the name is taken in the project), `mcp_server_limit` (SERVERS_MAX);
     *   502 `mcp_server_unreachable` (no MCP server answered there).
     */
    async create(actor: Actor, name: string, body: { name: string; url: string; headers?: Record<string, string> }) {
      const p = await deps.access.project(actor, name);
      try {
        checkUrl(body.url, deps.limits.allow);
      } catch {
        throw new BadRequest(
          'mcp_server_refused',
          'The address is not allowed: only public http(s) addresses (or those the operator allows).',
        );
      }
      if (await repo.exists(p.id, body.name))
        throw new Conflict('mcp_server_exists', 'The project already has an MCP server of this name.');
      if ((await repo.list(p.id)).length >= SERVERS_MAX)
        throw new Conflict('mcp_server_limit', `A project may register ${SERVERS_MAX} MCP servers.`);
      const headers = body.headers ?? {};
      let conn: McpConnection | undefined;
      let tools: Array<{ name: string; description: string }>;
      try {
        conn = await connectMcp(body.url, headers, deps.limits);
        tools = (await conn.listTools()).map((t) => ({ name: t.name, description: t.description.slice(0, 500) }));
      } catch (err) {
        if (refused(err))
          throw new BadRequest(
            'mcp_server_refused',
            'The address leads to a private, loopback, link-local or reserved address; it was not contacted.',
          );
        throw new Upstream(502, 'mcp_server_unreachable', 'No MCP server answered at this address.');
      } finally {
        await conn?.close();
      }
      const names = Object.keys(headers);
      const row = await repo
        .insert({
          projectId: p.id,
          name: body.name,
          url: body.url,
          headersEnc: names.length ? deps.sealer.seal(JSON.stringify(headers)) : null,
          headerNames: names,
          tools,
          createdBy: actor.id,
        })
        .catch((err: unknown) => {
          if ((err as { code?: string }).code === '23505')
            throw new Conflict('mcp_server_exists', 'The project already has an MCP server of this name.');
          throw err;
        });
      return { id: row.id, name: row.name, url: row.url, tools: row.tools.map((t) => t.name) };
    },

    /** DELETE /projects/:name/mcp-servers/:id → `{ok:true}`. @throws NotFound `mcp_server_not_found`. */
    async remove(actor: Actor, name: string, id: number) {
      const p = await deps.access.project(actor, name);
      if (!(await repo.remove(p.id, id)))
        throw new NotFound('The project has no MCP server with this id.', 'mcp_server_not_found');
      return { ok: true as const };
    },

    /**
     * Check a worker's `mcp_servers` against the project's servers.
     * @throws BadRequest `unknown_mcp_server` with `field` (`mcp_servers/<index>` of the first unknown one).
     */
    async checkNames(projectId: number, names: string[]): Promise<void> {
      const known = new Set((await repo.list(projectId)).map((s) => s.name));
      const unknown = names.findIndex((n) => !known.has(n));
      if (unknown >= 0)
        throw new BadRequest('unknown_mcp_server', 'mcp_servers names a server the project has not registered.', {
          field: `mcp_servers/${unknown}`,
        });
    },
  };
}

export type McpServersService = ReturnType<typeof createMcpServersService>;
