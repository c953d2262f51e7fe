/**
 * A tiny round-robin load balancer for tests: each request goes to the next backend in turn (or the one
 * pinned for the next request), streamed both ways (SSE passes through as it is written), with
 * `x-forwarded-for` kept as the client sent it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export async function startBalancer(backends: string[]) {
  let next = 0;
  let pinned: number | undefined;
  /** Index of the backend that served each request, in order. */
  const served: number[] = [];
  const server = http.createServer((req, res) => {
    const i = pinned ?? next++ % backends.length;
    pinned = undefined;
    served.push(i);
    const target = new URL(req.url ?? '/', backends[i]);
    const up = http.request(
      target,
      { method: req.method, headers: { ...req.headers, host: target.host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    up.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    res.on('close', () => up.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    /** Send the next request to backend `i` (then round robin again). */
    pin(i: number) {
      pinned = i;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
