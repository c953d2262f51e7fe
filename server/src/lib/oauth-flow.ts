/**
 * What an OAuth flow keeps between its start and its callback (docs/api.md, Signing in with the identity provider;
 * Connecting the code host): a short-lived cookie sealed with the secret store's key (AES-256-GCM, so any
 * instance can open it and nobody can read or change it), `HttpOnly`, `SameSite=Lax` (the provider's redirect back
 * is a top-level navigation, which carries it), `Secure` when the service is served over https, scoped to the
 * callback's path. It binds the flow to the browser that started it: a callback without it, or with a `state`
 * that differs from the one it holds, is refused.
 *
 * A flow also remembers a fingerprint of the OAuth client it started with (`clientFingerprint`): a callback after
 * the client id or secret was rotated is refused (400), and the user starts again with the new client.
 */
import crypto from 'node:crypto';
import { parseCookie, stringifySetCookie } from 'cookie';
import type { Sealer } from '../secrets/crypto.ts';

/** How long a started flow may take to come back, in ms (10 minutes). */
export const FLOW_TTL_MS = 10 * 60_000;

export interface FlowCookies {
  /** The `Set-Cookie` value that keeps `data` for FLOW_TTL_MS under `name`, sent back only to `path`. */
  issue(name: string, path: string, data: object): string;
  /**
   * The flow kept under `name` in a `Cookie` header.
   * @returns undefined when there is none, it was changed or sealed with another key, or it expired
   */
  read<T extends object>(cookieHeader: string | undefined, name: string): T | undefined;
  /** The `Set-Cookie` value that deletes the cookie `name` of `path`. */
  clear(name: string, path: string): string;
}

/**
 * The flow cookies of a service served at `appUrl` (`Secure` when it is https).
 * @param sealer the secret store's sealer (secrets/crypto.ts)
 */
export function createFlowCookies(sealer: Sealer, appUrl: string): FlowCookies {
  const secure = appUrl.startsWith('https:');
  const base = { httpOnly: true, sameSite: 'lax' as const, secure };
  return {
    issue(name, path, data) {
      const value = sealer.seal(JSON.stringify({ ...data, exp: Date.now() + FLOW_TTL_MS }));
      return stringifySetCookie({ name, value, path, maxAge: FLOW_TTL_MS / 1000, ...base });
    },
    read<T extends object>(cookieHeader: string | undefined, name: string): T | undefined {
      const raw = cookieHeader ? parseCookie(cookieHeader)[name] : undefined;
      if (!raw) return undefined;
      try {
        const data = JSON.parse(sealer.open(raw)) as T & { exp?: number };
        return typeof data.exp === 'number' && data.exp > Date.now() ? data : undefined;
      } catch {
        return undefined;
      }
    },
    clear(name, path) {
      return stringifySetCookie({ name, value: '', path, maxAge: 0, expires: new Date(0), ...base });
    },
  };
}

/**
 * A short fingerprint of an OAuth client's settings (hex): flows remember it so that a callback after a rotation
 * is recognised. Not reversible (a SHA-256 prefix), so it reveals nothing of the secret.
 */
export function clientFingerprint(...parts: string[]): string {
  return crypto.createHash('sha256').update(parts.join('\n')).digest('hex').slice(0, 16);
}

/** A same-site path to go to after signing in (`/…`, not `//…` or `/\…`), else undefined. */
export function safeRedirectPath(p: string | undefined): string | undefined {
  return p && p.startsWith('/') && !p.startsWith('//') && !p.startsWith('/\\') && !/[\s\0]/.test(p) && p.length <= 500
    ? p
    : undefined;
}
