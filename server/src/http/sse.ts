/**
 * The SSE writer of every stream (docs/ARCHITECTURE.md, "Live streams"): server-sent events over Node's
 * response: `event: <name>\ndata: <json>\n\n` (`data: <json>\n\n` for an event without a name), a comment
 * heartbeat every `heartbeatMs`, and a clean end. When the client goes away the event source is closed
 * (`return()`; a stream made by `lib/follow.ts` ends at once then, even while it waits).
 */
import type { ServerResponse } from 'node:http';

/** The SSE head's own headers. */
const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

/**
 * Write the SSE head (status 200, no caching, no proxy buffering) with `headers` besides (they win over the SSE
 * ones; undefined values are skipped). A hijacked route passes `reply.getHeaders()`: the request id and the security
 * headers its hooks set on the reply.
 */
export function openSse(
  res: ServerResponse,
  headers: Readonly<Record<string, string | number | readonly string[] | undefined>> = {},
) {
  for (const [name, value] of Object.entries(SSE_HEADERS)) res.setHeader(name, value);
  applyHeaders(res, headers);
  res.writeHead(200);
  res.flushHeaders?.();
}

/** One server-sent event: its name (omitted: the client's default `message`) and its JSON data. */
export interface SseEvent {
  event?: string;
  data: unknown;
}

/** Stream `events` until they end or the client leaves; then end the response. */
export async function pipeSse(
  res: ServerResponse,
  events: AsyncGenerator<SseEvent, void, undefined>,
  opts: { heartbeatMs?: number } = {},
) {
  const beat = setInterval(() => {
    if (!res.writableEnded) res.write(': ping\n\n');
  }, opts.heartbeatMs ?? 15_000);
  beat.unref();
  let gone = false;
  const onClose = () => {
    gone = true;
    void events.return(undefined);
  };
  res.on('close', onClose);
  try {
    for await (const e of events) {
      if (gone || res.writableEnded || res.destroyed) break;
      res.write(`${e.event === undefined ? '' : `event: ${e.event}\n`}data: ${JSON.stringify(e.data)}\n\n`);
    }
  } finally {
    clearInterval(beat);
    res.off('close', onClose);
    if (!res.writableEnded) res.end();
  }
}

/**
 * Set `headers` on a raw answer a route took over (`reply.hijack()`), undefined values skipped: with
 * `reply.getHeaders()`, the request id and the security headers the app's hooks set on the reply
 * (http/security-headers.ts) go out with the route's own head.
 */
export function applyHeaders(
  res: ServerResponse,
  headers: Readonly<Record<string, string | number | readonly string[] | undefined>>,
): void {
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) res.setHeader(name, value);
}
