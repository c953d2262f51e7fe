import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FetchFailed, FetchRefused, resolveOutbound, safeFetch } from './safe-fetch.ts';

describe('safeFetch against a local server', () => {
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/to') return res.writeHead(302, { location: url.searchParams.get('u')! }).end();
      if (url.pathname === '/loop') return res.writeHead(302, { location: '/loop' }).end();
      if (url.pathname === '/slow') return setTimeout(() => res.end('late'), 2000);
      if (url.pathname === '/gzip')
        return res
          .writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' })
          .end(Buffer.alloc(10, 1));
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`hello ${req.headers['accept-encoding']}`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });
  const opts = { maxBytes: 1000, timeoutMs: 1000 };

  it('refuses a host name that resolves to loopback unless it is allowed', async () => {
    await expect(safeFetch(`http://localhost:${port}/`, opts)).rejects.toThrow(FetchRefused);
    const ok = await safeFetch(`http://localhost:${port}/`, { ...opts, allow: ['localhost'] });
    expect(ok.body.toString()).toBe('hello identity');
    const byAddress = await safeFetch(`http://127.0.0.1:${port}/`, { ...opts, allow: ['127.0.0.0/8'] });
    expect(byAddress.status).toBe(200);
  });
  it('checks every redirect hop', async () => {
    const allow = ['localhost'];
    for (const u of [`http://127.0.0.1:${port}/`, 'http://169.254.169.254/', 'http://[::1]/', 'http://10.0.0.1/'])
      await expect(
        safeFetch(`http://localhost:${port}/to?u=${encodeURIComponent(u)}`, { ...opts, allow }),
        u,
      ).rejects.toThrow(FetchRefused);
    await expect(
      safeFetch(`http://localhost:${port}/to?u=${encodeURIComponent('file:///etc/passwd')}`, { ...opts, allow }),
    ).rejects.toThrow(FetchRefused);
    await expect(safeFetch(`http://localhost:${port}/loop`, { ...opts, allow })).rejects.toThrow(/Too many redirects/);
  });
  it('keeps to its time and size limits and asks for no compression', async () => {
    const allow = ['localhost'];
    await expect(safeFetch(`http://localhost:${port}/slow`, { ...opts, allow, timeoutMs: 200 })).rejects.toThrow(
      FetchFailed,
    );
    await expect(safeFetch(`http://localhost:${port}/`, { ...opts, allow, maxBytes: 3 })).rejects.toThrow(/larger/);
    // A compressed body is never inflated here: its bytes are counted as they are.
    const gz = await safeFetch(`http://localhost:${port}/gzip`, { ...opts, allow });
    expect(gz.body.length).toBe(10);
  });
});

describe('resolveOutbound (for a connection another program makes)', () => {
  it('resolves a name now and refuses it when an address is not public; literal and allowed hosts pass as they are', async () => {
    await expect(resolveOutbound('http://localhost:6379/x')).rejects.toThrow(FetchRefused);
    await expect(resolveOutbound('git://example.com/x.git')).rejects.toThrow(FetchRefused);
    await expect(resolveOutbound('http://10.0.0.5/x')).rejects.toThrow(FetchRefused);
    await expect(resolveOutbound('https://u:p@8.8.8.8/x')).rejects.toThrow(FetchRefused);
    expect(await resolveOutbound('https://u:p@8.8.8.8/x', [], { credentials: true })).toMatchObject({
      port: 443,
      addresses: ['8.8.8.8'],
    });
    expect(await resolveOutbound('http://intranet.test:81/a', ['intranet.test'])).toMatchObject({
      port: 81,
      addresses: [],
    });
    expect((await resolveOutbound('http://127.0.0.1:9/', ['127.0.0.0/8'])).addresses).toEqual(['127.0.0.1']);
  });
});
