/**
 * Server-sent events over Node's response: `event: <name>\ndata: <json>\n\n`, a comment heartbeat every
 * `heartbeatMs`, and a clean end. When the client goes away the event source is closed (`return()`).
 */
import type { ServerResponse } from 'node:http';

/** Write the SSE head (status 200, no caching, no proxy buffering). */
export function openSse(res: ServerResponse, headers: Record<string, string> = {}) {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    ...headers,
  });
  res.flushHeaders?.();
}

/** Stream `events` until they end or the client leaves; then end the response. */
export async function pipeSse(
  res: ServerResponse,
  events: AsyncGenerator<{ event: string; data: unknown }>,
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
      if (gone) break;
      res.write(`event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`);
    }
  } finally {
    clearInterval(beat);
    res.off('close', onClose);
    if (!res.writableEnded) res.end();
  }
}
