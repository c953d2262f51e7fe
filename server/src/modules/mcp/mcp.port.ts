/**
 * Workers' outside MCP servers as agent tools (docs/api.md, Outside MCP servers for workers): a run tool source
 * (runtime/tools.ts `RunToolSource`) that, at a run's start, connects to each of the project's MCP servers the
 * worker names in `mcp_servers`, lists their tools and offers them to the model as `<server>__<tool>`. Calls are
 * bounded in time and size (mcp.client.ts), follow the outbound address rules, count in the run's turns like any
 * tool call, and are logged in the run (its `tool_calls`, a `tool_result` event with the server, tool, time and
 * size, and an `mcp_tool_call` activity event). A server that cannot be reached offers no tools for that run.
 */
import type { Sealer } from '../../secrets/crypto.ts';
import type { AgentTool, RunToolSource, ToolOutcome } from '../runtime/tools.ts';
import type { WorkersRepo } from '../workers/workers.repo.ts';
import { connectMcp, type McpClientLimits, type McpConnection, type OutsideTool } from './mcp.client.ts';
import type { McpRepo } from './mcp.repo.ts';

/** Longest tool name the model vendors accept. */
const TOOL_NAME_MAX = 64;
/** Tool description characters handed to the model at most. */
const DESCRIPTION_MAX = 1024;

export interface McpPortDeps {
  repo: Pick<McpRepo, 'forConnecting' | 'setTools'>;
  workers: Pick<WorkersRepo, 'mcpServers'>;
  sealer: Pick<Sealer, 'open'>;
  limits: McpClientLimits;
  log: { warn(o: object, m: string): void };
}

/** Pure: the model-facing name of a server's tool (`<server>__<tool>`, other characters as `_`, at most 64). */
export const prefixedName = (server: string, tool: string): string =>
  `${server}__${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`.slice(0, TOOL_NAME_MAX);

/** The sealed headers of a server as an object ({} when none or unreadable). */
function openHeaders(sealer: Pick<Sealer, 'open'>, sealed: string | null): Record<string, string> {
  if (!sealed) return {};
  try {
    return JSON.parse(sealer.open(sealed)) as Record<string, string>;
  } catch {
    return {};
  }
}

/** One outside tool as an agent tool over an open connection. */
function agentTool(server: string, t: OutsideTool, conn: McpConnection): AgentTool {
  return {
    name: prefixedName(server, t.name),
    description: `[MCP server ${server}] ${t.description}`.slice(0, DESCRIPTION_MAX),
    input_schema: {
      type: 'object',
      properties: t.inputSchema.properties ?? {},
      ...(Array.isArray(t.inputSchema.required) ? { required: t.inputSchema.required } : {}),
    },
    group: 'mcp',
    async run(ctx, input): Promise<ToolOutcome> {
      const started = Date.now();
      let outcome: ToolOutcome;
      try {
        const r = await conn.callTool(t.name, input, ctx.signal);
        outcome = {
          content: r.text || '(no output)',
          is_error: r.isError,
          data: { server, tool: t.name, ms: Date.now() - started, chars: r.chars, truncated: r.truncated },
        };
      } catch (err) {
        const timedOut = /time|abort/i.test((err as Error).message ?? '');
        outcome = {
          content: timedOut
            ? `The MCP server ${server} did not answer ${t.name} in time.`
            : `The MCP server ${server} failed to run ${t.name}.`,
          is_error: true,
          data: { server, tool: t.name, ms: Date.now() - started, failed: timedOut ? 'timeout' : 'error' },
        };
      }
      await ctx.activity('mcp_tool_call', `${server}: ${t.name}`, null, {
        ...outcome.data,
        is_error: !!outcome.is_error,
      });
      return outcome;
    },
  };
}

/** The run tool source of workers' outside MCP servers (registered on the agent's tool registry). */
export function createMcpToolSource(deps: McpPortDeps): RunToolSource {
  return {
    name: 'mcp',
    async open(run) {
      let servers: Awaited<ReturnType<McpPortDeps['repo']['forConnecting']>> = [];
      try {
        const names = run.mcpServers ?? (await deps.workers.mcpServers(run.workerId));
        servers = await deps.repo.forConnecting(run.projectId, names);
      } catch (err) {
        deps.log.warn({ err: (err as Error).message, worker: run.workerId }, 'MCP servers of a worker not read');
      }
      const opened = await Promise.all(
        servers.map(async (s) => {
          try {
            const conn = await connectMcp(s.url, openHeaders(deps.sealer, s.headers_enc), deps.limits);
            try {
              const listed = await conn.listTools();
              void deps.repo
                .setTools(
                  s.id,
                  listed.map((t) => ({ name: t.name, description: t.description.slice(0, 500) })),
                )
                .catch(() => {});
              return { conn, tools: listed.map((t) => agentTool(s.name, t, conn)) };
            } catch (err) {
              await conn.close();
              throw err;
            }
          } catch (err) {
            deps.log.warn(
              { err: (err as Error).message, server: s.name, worker: run.workerId },
              'MCP server unavailable for a run; its tools are left out',
            );
            return null;
          }
        }),
      );
      const live = opened.filter((o): o is NonNullable<typeof o> => o !== null);
      return {
        tools: live.flatMap((o) => o.tools),
        close: async () => {
          await Promise.all(live.map((o) => o.conn.close()));
        },
      };
    },
  };
}
