/**
 * A local k-anonymity range API: `GET /range/{PREFIX}` answers `SUFFIX:COUNT` lines for the
 * passwords it was told are breached (plus padding lines), and records every requested path.
 */
import http from 'node:http';
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';

export async function startRangeApiStandIn(
  breached: string[],
  /** `port`: listen there (bring a stopped stand-in back at the same address); default any free port. */
  opts: { delayMs?: number; status?: number; port?: number } = {},
) {
  const hashes = breached.map((p) => crypto.createHash('sha1').update(p).digest('hex').toUpperCase());
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    const m = /^\/range\/([0-9A-F]{5})$/.exec(req.url ?? '');
    const answer = () => {
      if (opts.status && opts.status !== 200) return res.writeHead(opts.status).end('error');
      if (!m) return res.writeHead(400).end('bad prefix');
      const lines = hashes.filter((h) => h.startsWith(m[1])).map((h) => `${h.slice(5)}:42`);
      lines.push('0000000000000000000000000000000000A:0', '0123456789ABCDEF0123456789ABCDEF012:3');
      res.writeHead(200, { 'content-type': 'text/plain' }).end(lines.join('\r\n'));
    };
    if (opts.delayMs) setTimeout(answer, opts.delayMs).unref();
    else answer();
  });
  await new Promise<void>((r) => server.listen(opts.port ?? 0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
