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
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
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

/**
 * Register the protections on the root instance, before the routes: helmet's headers with `CSP_DIRECTIVES` on every
 * answer, and the HSTS header on requests that came over https (`req.protocol`, which honours `TRUST_PROXY`).
 */
export async function installSecurityHeaders(app: FastifyInstance): Promise<void> {
  const headers = Object.entries(securityHeaders());
  app.addHook('onRequest', (req, reply, done) => {
    // On the raw answer, as helmet itself does: streams that write it directly (server-sent events) carry them too,
    // and a route's own header of the same name still wins.
    for (const [name, value] of headers) reply.raw.setHeader(name, value);
    if (req.protocol === 'https') reply.raw.setHeader('strict-transport-security', HSTS);
    done();
  });
}
