/**
 * The MCP server's request handling (docs/api.md, The MCP server): one stateless SDK server and transport per
 * request, bound to the caller (mcp.server.ts builds the tools and resources). The SDK is imported at first use.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Actor } from '../../http/auth.ts';
import { createMcpServer, type McpServerDeps } from './mcp.server.ts';

export function createMcpService(deps: McpServerDeps) {
  return {
    /**
     * POST /mcp: answer one JSON-RPC message (or batch) of `actor` on `res` (JSON, no session).
     * @param body the request's parsed JSON body.
     */
    async handle(actor: Actor, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
      const [server, { StreamableHTTPServerTransport }] = await Promise.all([
        createMcpServer(deps, actor),
        import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
      ]);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    },
  };
}

export type McpService = ReturnType<typeof createMcpService>;
