/**
 * The browser's protections on every answer (docs/ARCHITECTURE.md, HTTP conventions), as helmet sets them with the
 * service's own Content-Security-Policy:
 *  - `Content-Security-Policy` (`CSP_DIRECTIVES`): scripts only from this origin (no inline script, no eval),
 *    connections (fetch, server-sent events, the terminal's WebSocket) only to it, no plugins, no `<base>`, forms
 *    posting only here, frames only of object URLs the page made (`blob:`: a research-note PDF shown at a cited page),
 *    and no framing (`frame-ancestors 'none'`). Styles allow inline `<style>` elements as well:
 *    the dialogs' scroll lock and the terminal (xterm.js) write style elements computed at run time; a style cannot
 *    run code. The web UI is tested under it in Chromium (web/e2e: any CSP violation fails the run);
 *  - `X-Frame-Options: DENY` (older browsers), `Referrer-Policy: no-referrer` (a page's URL — a reset link's token —
 *    never leaves in a Referer), `X-Content-Type-Options: nosniff`, and helmet's other defaults
 *    (`Cross-Origin-Opener-Policy`, `Cross-Origin-Resource-Policy: same-origin`, …);
 *  - `Strict-Transport-Security` (one year, subdomains) on answers to requests that came over https: directly, or
 *    behind a proxy with `TRUST_PROXY=1` and `X-Forwarded-Proto: https`. Over plain http it is not sent.
 *
 * The API's answers (`/api/…` except the reference page `/api/reference`) are never HTML (JSON, event streams,
 * downloads sent as `application/octet-stream` or their own media type with `nosniff`), so they carry a shorter but
 * stricter set (`apiSecurityHeaders()`): `Content-Security-Policy: default-src 'none'; base-uri 'none';
 * form-action 'none'; frame-ancestors 'none'` (a document made of such an answer may load, run, frame or submit
 * nothing, and be framed nowhere), `X-Content-Type-Options: nosniff`, `Cross-Origin-Resource-Policy: same-origin`,
 * `Cross-Origin-Opener-Policy: same-origin`, `Referrer-Policy: no-referrer` and `X-Frame-Options: DENY` as on the
 * pages. Left out of them, each having no effect on an answer that is not an HTML document: `Origin-Agent-Cluster`
 * (the agent cluster of a page's scripts; none may run), `X-DNS-Prefetch-Control` (prefetching of an HTML page's
 * links), `X-Download-Options` (Internet Explorer 8 opening a downloaded HTML file in the site's context),
 * `X-Permitted-Cross-Domain-Policies` (read by Flash and Acrobat on the answer of a policy file, `/crossdomain.xml`,
 * which keeps the full set) and `X-XSS-Protection: 0` (turns off old browsers' filter of HTML pages). The whole set
 * is ~640 bytes, the API's ~280 (bench/README.md, "Auth-me"). The web UI opens no API answer as a document of its
 * own (images, fetches and redirects only; the research-note PDF is shown from an object URL, under the page's policy).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import helmet from 'helmet';

/** The Content-Security-Policy of every answer (see the module comment). */
export const CSP_DIRECTIVES = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", 'data:', 'blob:'],
  fontSrc: ["'self'", 'data:'],
  mediaSrc: ["'self'", 'blob:'],
  connectSrc: ["'self'"],
  workerSrc: ["'self'", 'blob:'],
  manifestSrc: ["'self'"],
  // Only the viewer of a PDF the page fetched itself (a citation opened at its page: an object URL of the file).
  frameSrc: ['blob:'],
  objectSrc: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
};

/** `Strict-Transport-Security` sent over https. */
export const HSTS = 'max-age=31536000; includeSubDomains';

/**
 * The headers helmet sets with these options, worked out once: helmet's middleware sets the same headers on every
 * answer, and building it per request (as its Fastify plugin does) parsed the policy every time (bench/README.md,
 * `auth-me`). @throws at start if helmet does anything but set or remove headers.
 */
export function securityHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  const res = {
    setHeader: (name: string, value: string | number | readonly string[]) => {
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    },
    removeHeader: (name: string) => void delete headers[name.toLowerCase()],
  };
  let failed: unknown;
  helmet({
    contentSecurityPolicy: { useDefaults: false, directives: CSP_DIRECTIVES },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    // Sent only over https, below.
    strictTransportSecurity: false,
  })({} as IncomingMessage, res as unknown as ServerResponse, (err?: unknown) => (failed = err));
  if (failed) throw failed;
  return headers;
}

/** The Content-Security-Policy of the API's answers (see the module comment). */
export const API_CSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** helmet's headers an API answer keeps, with `API_CSP` (see the module comment). */
const API_KEEPS = [
  'cross-origin-opener-policy',
  'cross-origin-resource-policy',
  'referrer-policy',
  'x-content-type-options',
  'x-frame-options',
];

/** The headers of the API's answers: `API_CSP` and the ones of `securityHeaders()` named in `API_KEEPS`. */
export function apiSecurityHeaders(): Record<string, string> {
  const all = securityHeaders();
  const headers: Record<string, string> = { 'content-security-policy': API_CSP };
  for (const name of API_KEEPS) {
    if (all[name] === undefined) throw new Error(`helmet no longer sets ${name}`);
    headers[name] = all[name];
  }
  return headers;
}

/** Whether a request's answer gets the API's set: paths under `/api/` but the reference page's. Pure. */
export const isApiPath = (url: string): boolean => url.startsWith('/api/') && !url.startsWith('/api/reference');

/**
 * The protections as one function the app's first `onRequest` hook calls (app.ts), worked out once: helmet's
 * headers with `CSP_DIRECTIVES` on every answer but the API's, which get `apiSecurityHeaders()`, and the HSTS header
 * on requests that came over https (`req.protocol`, which honours `TRUST_PROXY`). Set as the reply's headers
 * (`reply.header`), so a route's own header of the same name still wins and Node writes the answer's head from
 * Fastify's one header object: setting them on the raw answer instead made Node keep a second header table and copy
 * Fastify's headers into it on every answer (bench/README.md, "Auth-me"). A route that takes over the raw answer
 * (`reply.hijack()`: server-sent events, the MCP transport) writes `reply.getHeaders()` with its own head.
 */
export function securityHeadersSetter(): (req: FastifyRequest, reply: FastifyReply) => void {
  // Names and values in parallel arrays, walked by index: no iterator or pair per header and request.
  const page = securityHeaders();
  const api = apiSecurityHeaders();
  const sets = [page, api].map((h) => ({ names: Object.keys(h), values: Object.values(h) }));
  return (req, reply) => {
    const { names, values } = sets[isApiPath(req.url) ? 1 : 0]!;
    for (let i = 0; i < names.length; i++) reply.header(names[i]!, values[i]!);
    if (req.protocol === 'https') reply.header('strict-transport-security', HSTS);
  };
}
