/**
 * Access tokens (docs/api.md, Authentication and tokens): HS256 JWTs with `sub` (user id),
 * `role`, `pv` (password version), `chat_id`, `iat` and `exp` (24 h).
 */
import { SignJWT, jwtVerify, errors } from 'jose';
import { LRUCache } from 'lru-cache';

export const TOKEN_LIFETIME_S = 24 * 60 * 60;

export interface TokenClaims {
  sub: number;
  role: 'user' | 'admin';
  pv: number;
  chat_id: string;
}

export interface Tokens {
  /** Sign a 24 h token for these claims. */
  sign(claims: TokenClaims): Promise<string>;
  /** The claims of a token verified before and not expired yet, without verifying again; else undefined. */
  peek(token: string): (TokenClaims & { iat: number; exp: number }) | undefined;
  /**
   * Verify signature (HS256 only: `alg:none` and other algorithms are refused) and expiry. @returns undefined when
   * invalid.
   */
  verify(token: string): Promise<(TokenClaims & { iat: number; exp: number }) | { expired: true } | undefined>;
}

export function createTokens(secret: string): Tokens {
  const key = new TextEncoder().encode(secret);
  // Verified tokens only (a forged one never enters), each until its own expiry; at most 10,000, the least
  // recently used dropped first.
  const verified = new LRUCache<string, TokenClaims & { iat: number; exp: number }>({ max: 10_000 });
  return {
    async sign(c) {
      return new SignJWT({ role: c.role, pv: c.pv, chat_id: c.chat_id })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(String(c.sub))
        .setIssuedAt()
        .setExpirationTime(`${TOKEN_LIFETIME_S}s`)
        .sign(key);
    },
    peek(token) {
      const hit = verified.get(token);
      return hit && hit.exp * 1000 > Date.now() ? hit : undefined;
    },
    async verify(token) {
      const hit = verified.get(token);
      if (hit) {
        if (hit.exp * 1000 > Date.now()) return hit;
        verified.delete(token);
        return { expired: true };
      }
      try {
        const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'] });
        const sub = Number(payload.sub);
        if (!Number.isInteger(sub) || sub <= 0) return undefined;
        const role = payload.role === 'admin' ? 'admin' : 'user';
        const claims = {
          sub,
          role,
          pv: typeof payload.pv === 'number' ? payload.pv : 0,
          chat_id: typeof payload.chat_id === 'string' ? payload.chat_id : String(sub),
          iat: payload.iat ?? 0,
          exp: payload.exp ?? 0,
        } as const;
        verified.set(token, claims);
        return claims;
      } catch (err) {
        if (err instanceof errors.JWTExpired) return { expired: true };
        return undefined;
      }
    },
  };
}
