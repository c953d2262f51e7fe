/**
 * A client of an outside MCP server (docs/api.md, Outside MCP servers for workers): the official SDK's client
 * over Streamable HTTP, every request through `outboundFetch` (lib/safe-fetch.ts: the outbound address rules,
 * a time limit and a byte limit per exchange), and tool answers turned into bounded text for a model.
 */
import { outboundFetch } from '../../lib/safe-fetch.ts';

/** Limits of talking to an outside MCP server. */
export interface McpClientLimits {
  /** OUTBOUND_ALLOW_PRIVATE: non-public hosts, addresses and ranges that may still be reached. */
  allow: readonly string[];
  /** Time limit of connecting and listing tools, and of one tool call (ms). */
  timeoutMs: number;
  /** Largest answer body (bytes) and largest tool result handed to a model (characters). */
  maxBytes: number;
  maxResultChars: number;
}

export const DEFAULT_MCP_LIMITS: Omit<McpClientLimits, 'allow'> = {
  timeoutMs: 30_000,
  maxBytes: 2 * 1024 * 1024,
  maxResultChars: 64_000,
};

/** A tool an outside server offers. */
export interface OutsideTool {
  name: string;
  description: string;
  inputSchema: { type: 'object'; properties?: Record<string, unknown>; required?: string[] };
}

/** A tool call's outcome as text for the model. */
export interface OutsideResult {
  text: string;
  isError: boolean;
  /** Characters before the cut (when `truncated`). */
  chars: number;
  truncated: boolean;
}

export interface McpConnection {
  listTools(): Promise<OutsideTool[]>;
  callTool(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<OutsideResult>;
  close(): Promise<void>;
}

/** Pure: the text of a `tools/call` result (text parts, resources' text, structured content), cut to `max`. */
export function resultText(result: Record<string, unknown>, max: number): OutsideResult {
  const parts: string[] = [];
  for (const c of (result.content as Array<Record<string, unknown>> | undefined) ?? []) {
    if (c.type === 'text') parts.push(String(c.text ?? ''));
    else if (c.type === 'resource') {
      const r = (c.resource ?? {}) as Record<string, unknown>;
      parts.push(typeof r.text === 'string' ? r.text : `[resource ${String(r.uri ?? '')}]`);
    } else if (c.type === 'resource_link') parts.push(`[resource ${String(c.uri ?? '')}]`);
    else parts.push(`[${String(c.type)} content]`);
  }
  if (!parts.length && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  if (!parts.length && 'toolResult' in result) parts.push(JSON.stringify(result.toolResult));
  const text = parts.join('\n');
  const truncated = text.length > max;
  return {
    text: truncated ? `${text.slice(0, max)}\n… (cut at ${max} characters of ${text.length})` : text,
    isError: result.isError === true,
    chars: text.length,
    truncated,
  };
}

/**
 * Connect to the MCP server at `url` (initialize) with `headers`.
 * @throws FetchRefused (lib/safe-fetch.ts) when the address is not allowed — nothing was sent; FetchFailed or
 *   the SDK's errors when it cannot be reached or does not speak MCP.
 */
export async function connectMcp(
  url: string,
  headers: Record<string, string>,
  limits: McpClientLimits,
): Promise<McpConnection> {
  // The SDK's client is imported at first use (~0.3 s and ~30 MiB of every start otherwise).
  const [{ Client }, { StreamableHTTPClientTransport }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
  ]);
  const client = new Client({ name: 'crm-service-worker', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: outboundFetch({ allow: limits.allow, timeoutMs: limits.timeoutMs, maxBytes: limits.maxBytes }),
    requestInit: { headers },
    reconnectionOptions: {
      maxReconnectionDelay: 1000,
      initialReconnectionDelay: 1000,
      reconnectionDelayGrowFactor: 1,
      maxRetries: 0,
    },
  });
  try {
    await client.connect(transport, { timeout: limits.timeoutMs });
  } catch (err) {
    await client.close().catch(() => {});
    throw err;
  }
  return {
    async listTools() {
      const out: OutsideTool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: limits.timeoutMs });
        for (const t of page.tools)
          out.push({
            name: t.name,
            description: t.description ?? '',
            inputSchema: { ...(t.inputSchema as OutsideTool['inputSchema']), type: 'object' },
          });
        cursor = page.nextCursor;
      } while (cursor && out.length < 1000);
      return out;
    },
    async callTool(name, args, signal) {
      const r = await client.callTool({ name, arguments: args }, undefined, {
        timeout: limits.timeoutMs,
        maxTotalTimeout: limits.timeoutMs,
        signal,
      });
      return resultText(r as Record<string, unknown>, limits.maxResultChars);
    },
    close: () => client.close().catch(() => {}),
  };
}
