/**
 * Outbound HTTP to addresses a user gave (web-page and YouTube note sources, the page reader's target, a
 * repository to clone): the one helper that keeps such requests away from the service's own network (SSRF).
 *
 * - Only `http:` and `https:` URLs, without credentials.
 * - Every address a host name resolves to must be a public unicast address: loopback, private, link-local
 *   (cloud metadata 169.254.169.254 included), unique-local, carrier-grade NAT, multicast, reserved and
 *   unspecified addresses are refused, IPv4-mapped IPv6 addresses judged as their IPv4 address. The check
 *   runs inside the connection's own DNS lookup, so the address checked is the address connected to (no
 *   second resolution an attacker's DNS could answer differently).
 * - Redirects are followed by hand (at most 5), each hop checked again.
 * - A time limit on the whole exchange and a byte limit on the body (counted as it arrives; no compression
 *   is asked for, so a small compressed body cannot expand past the limit).
 *
 * - A program that connects by itself (git) gets the checked addresses from `resolveOutbound` to pin its
 *   connection to them, and must follow no redirect; a third party that fetches for us (the page reader) gets
 *   only URLs `resolveOutbound` passed.
 *
 * `allow` names exceptions an operator configures (`OUTBOUND_ALLOW_PRIVATE`): host names (exact) and IP
 * addresses or CIDR ranges that may be reached although they are not public (an intranet page, a local
 * stand-in in tests).
 */
import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * undici, imported at the first outbound request: only research notes' web sources and MCP clients use it, and
 * loaded at start it cost ~0.3 s and ~28 MiB alone (bench/README.md, "Start-up").
 */
let undiciLoaded: Promise<typeof import('undici')> | undefined;
const loadUndici = () => (undiciLoaded ??= import('undici'));

/** The request was refused before it was made: a scheme, an address or a redirect target is not allowed. */
export class FetchRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FetchRefused';
  }
}

/** The request was made and failed: network error, time limit, HTTP error status or a body over the limit. */
export class FetchFailed extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'FetchFailed';
  }
}

export interface SafeFetchOptions {
  /** Exceptions: host names, IP addresses and CIDR ranges that may be reached although not public. */
  allow?: readonly string[];
  /** Largest body accepted, in bytes. */
  maxBytes: number;
  /** Time limit of the whole exchange (all hops, body included), in ms. */
  timeoutMs: number;
  /** Redirects followed at most (default 5). */
  maxRedirects?: number;
  headers?: Record<string, string>;
}

export interface SafeResponse {
  /** The final URL (after redirects). */
  url: string;
  status: number;
  contentType: string;
  body: Buffer;
}

type Parsed = ReturnType<typeof ipaddr.parse>;

/** Whether `ip` lies in one of the allowed addresses or CIDR ranges. */
function inAllowed(ip: Parsed, allow: readonly string[]): boolean {
  for (const a of allow) {
    try {
      if (a.includes('/')) {
        const [range, bits] = ipaddr.parseCIDR(a);
        if (range.kind() === ip.kind() && ip.match([range, bits] as never)) return true;
      } else if (ipaddr.isValid(a)) {
        const x = ipaddr.process(a);
        if (x.kind() === ip.kind() && x.toNormalizedString() === ip.toNormalizedString()) return true;
      }
    } catch {
      /* not an address: a host name entry */
    }
  }
  return false;
}

/**
 * Whether the service may connect to `address` (an IPv4 or IPv6 literal): public unicast, or allowed.
 * Pure; exported for tests.
 */
export function addressAllowed(address: string, allow: readonly string[] = []): boolean {
  if (!ipaddr.isValid(address)) return false;
  const ip = ipaddr.process(address); // IPv4-mapped IPv6 → IPv4
  if (inAllowed(ip, allow)) return true;
  return ip.range() === 'unicast';
}

/** Whether a URL's host name is named in the allow-list (exact, case-insensitive). */
const hostAllowed = (host: string, allow: readonly string[]) =>
  allow.some((a) => !a.includes('/') && !ipaddr.isValid(a) && a.toLowerCase() === host.toLowerCase());

/**
 * Check a URL before connecting: scheme, credentials, and an IP-literal host.
 * @returns the parsed URL. @throws FetchRefused.
 */
export function checkUrl(raw: string, allow: readonly string[] = [], opts: { credentials?: boolean } = {}): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new FetchRefused('The address is not a valid URL.');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new FetchRefused('Only http and https addresses.');
  if (!opts.credentials && (u.username || u.password))
    throw new FetchRefused('Addresses with credentials are not fetched.');
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host) && !addressAllowed(host, allow))
    throw new FetchRefused('The address is private, loopback, link-local or reserved.');
  return u;
}

/**
 * Check an http(s) URL under the rules above and resolve its host now, for a connection this process does not
 * make itself: pin a program's connection to `addresses` (git's `http.curloptResolve`), or hand the URL to a third
 * party that fetches it. A host named in `allow` is not resolved (`addresses` empty).
 * @param opts.credentials accept `user:password@` in the URL (a private repository); refused otherwise.
 * @returns the URL, its port and the checked addresses (every address the name resolves to).
 * @throws FetchRefused (scheme, credentials, a non-public address); FetchFailed when the name does not resolve.
 */
export async function resolveOutbound(
  raw: string,
  allow: readonly string[] = [],
  opts: { credentials?: boolean } = {},
): Promise<{ url: URL; port: number; addresses: string[] }> {
  const url = checkUrl(raw, allow, opts);
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host)) return { url, port, addresses: [host] };
  if (hostAllowed(host, allow)) return { url, port, addresses: [] };
  let list: dns.LookupAddress[];
  try {
    list = await dns.promises.lookup(host, { all: true });
  } catch {
    throw new FetchFailed('The host name could not be resolved.');
  }
  if (!list.length || list.some((a) => !addressAllowed(a.address, allow)))
    throw new FetchRefused('The host resolves to a private, loopback, link-local or reserved address.');
  return { url, port, addresses: list.map((a) => a.address) };
}

/** A DNS lookup that refuses non-public answers (runs inside the connection, so the checked address is used). */
function guardedLookup(allow: readonly string[], skip: boolean): net.LookupFunction {
  return ((hostname: string, options: dns.LookupOptions, callback: (...a: unknown[]) => void) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err);
      const list = addresses as dns.LookupAddress[];
      if (!skip && (!list.length || list.some((a) => !addressAllowed(a.address, allow))))
        return callback(new FetchRefused('The host resolves to a private, loopback, link-local or reserved address.'));
      if (options.all) return callback(null, list);
      callback(null, list[0].address, list[0].family);
    });
  }) as net.LookupFunction;
}

/**
 * GET `url` under the rules above.
 * @returns the final URL, status (2xx), content type and body.
 * @throws FetchRefused (not allowed: nothing was sent to that address); FetchFailed (network, time limit,
 *   non-2xx status, body over `maxBytes`, too many redirects).
 */
export async function safeFetch(url: string, opts: SafeFetchOptions): Promise<SafeResponse> {
  const allow = opts.allow ?? [];
  const signal = AbortSignal.timeout(opts.timeoutMs);
  let current = url;
  const { Agent, request } = await loadUndici();
  for (let hop = 0; ; hop++) {
    const u = checkUrl(current, allow);
    const agent = new Agent({
      connect: { lookup: guardedLookup(allow, hostAllowed(u.hostname, allow)), timeout: opts.timeoutMs },
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
    });
    try {
      let res: Awaited<ReturnType<typeof request>>;
      try {
        res = await request(u, {
          method: 'GET',
          dispatcher: agent,
          signal,
          headers: {
            'user-agent': 'crm-service/1.0 (+research notes)',
            accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5',
            'accept-encoding': 'identity',
            ...opts.headers,
          },
        });
      } catch (err) {
        const cause = (err as { cause?: unknown }).cause;
        if (err instanceof FetchRefused) throw err;
        if (cause instanceof FetchRefused) throw cause;
        if (signal.aborted) throw new FetchFailed(`No answer within ${Math.round(opts.timeoutMs / 1000)} s.`);
        throw new FetchFailed(
          `The site could not be reached (${(err as NodeJS.ErrnoException).code ?? 'network error'}).`,
        );
      }
      // Dropping a body early (redirects, errors, limits) must not raise an unhandled error.
      res.body.on('error', () => {});
      const location = res.headers.location;
      if ([301, 302, 303, 307, 308].includes(res.statusCode) && location) {
        res.body.destroy();
        if (hop >= (opts.maxRedirects ?? 5)) throw new FetchFailed('Too many redirects.');
        current = new URL(String(location), u).toString();
        continue;
      }
      if (res.statusCode < 200 || res.statusCode > 299) {
        res.body.destroy();
        throw new FetchFailed(`The site answered HTTP ${res.statusCode}.`, res.statusCode);
      }
      const declared = Number(res.headers['content-length'] ?? NaN);
      const tooLarge = () =>
        new FetchFailed(`The page is larger than ${Math.round(opts.maxBytes / (1024 * 1024))} MB.`);
      if (Number.isFinite(declared) && declared > opts.maxBytes) {
        res.body.destroy();
        throw tooLarge();
      }
      const chunks: Buffer[] = [];
      let total = 0;
      try {
        for await (const c of res.body) {
          total += (c as Buffer).length;
          if (total > opts.maxBytes) {
            res.body.destroy();
            throw tooLarge();
          }
          chunks.push(c as Buffer);
        }
      } catch (err) {
        if (err instanceof FetchFailed) throw err;
        throw new FetchFailed(signal.aborted ? 'The page did not arrive in time.' : 'The page was cut off.');
      }
      return {
        url: u.toString(),
        status: res.statusCode,
        contentType: String(res.headers['content-type'] ?? ''),
        body: Buffer.concat(chunks),
      };
    } finally {
      void agent.close().catch(() => {});
    }
  }
}

export interface OutboundFetchOptions {
  /** Exceptions: host names, IP addresses and CIDR ranges that may be reached although not public. */
  allow?: readonly string[];
  /** Largest body of one answer, in bytes (counted as it arrives; a stream past it errors). */
  maxBytes: number;
  /** Time limit of one exchange (answer body included), in ms. */
  timeoutMs: number;
}

/**
 * A `fetch` under the rules above, for clients that speak a protocol over HTTP themselves (an MCP client): any
 * method and body, the caller's headers, the address rules checked on the URL and inside the connection's DNS
 * lookup, no redirects followed (a 3xx is answered as it is), a time limit per exchange (joined with the
 * caller's signal) and a byte limit on each answer's body.
 * @returns a function with `fetch`'s signature. It rejects with FetchRefused (nothing was sent to that address)
 *   or FetchFailed (network, time limit); a body past `maxBytes` errors while it is read.
 */
export function outboundFetch(opts: OutboundFetchOptions): typeof fetch {
  const allow = opts.allow ?? [];
  return (async (input: string | URL | Request, init: RequestInit = {}) => {
    const raw = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const u = checkUrl(raw, allow);
    const { Agent, fetch: undiciFetch } = await loadUndici();
    const agent = new Agent({
      connect: { lookup: guardedLookup(allow, hostAllowed(u.hostname, allow)), timeout: opts.timeoutMs },
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
    });
    const timeout = AbortSignal.timeout(opts.timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    let res: Awaited<ReturnType<typeof undiciFetch>>;
    try {
      res = await undiciFetch(u, {
        ...(init as Parameters<typeof undiciFetch>[1]),
        redirect: 'manual',
        signal,
        dispatcher: agent,
      });
    } catch (err) {
      void agent.close().catch(() => {});
      const cause = (err as { cause?: unknown }).cause;
      if (err instanceof FetchRefused) throw err;
      if (cause instanceof FetchRefused) throw cause;
      if (init.signal?.aborted) throw err;
      if (timeout.aborted) throw new FetchFailed(`No answer within ${Math.round(opts.timeoutMs / 1000)} s.`);
      throw new FetchFailed(
        `The server could not be reached (${(cause as NodeJS.ErrnoException)?.code ?? 'network error'}).`,
      );
    }
    const declared = Number(res.headers.get('content-length') ?? NaN);
    if (Number.isFinite(declared) && declared > opts.maxBytes) {
      void res.body?.cancel().catch(() => {});
      void agent.close().catch(() => {});
      throw new FetchFailed(`The answer is larger than ${opts.maxBytes} bytes.`);
    }
    let seen = 0;
    const body = res.body as unknown as ReadableStream<Uint8Array> | null;
    const limited = body?.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength;
          if (seen > opts.maxBytes)
            controller.error(new FetchFailed(`The answer is larger than ${opts.maxBytes} bytes.`));
          else controller.enqueue(chunk);
        },
        flush() {
          void agent.close().catch(() => {});
        },
      }),
    );
    if (!limited) void agent.close().catch(() => {});
    return new Response(limited ?? null, {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers as never,
    });
  }) as typeof fetch;
}
