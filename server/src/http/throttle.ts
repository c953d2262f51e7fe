/**
 * Throttling (docs/ARCHITECTURE.md, Throttling; docs/configuration.md, Rate limits): which routes are limited,
 * by what, and how much — in one table (`RULES`) — counted by `@fastify/rate-limit` through the throttle area's
 * store in the database, so a limit holds across every instance.
 *
 * - Sign-in: per account (the e-mail of the body) and per address, with exponential backoff once over the
 *   limit; a login that succeeds clears its account's count. Registration and password reset per address;
 *   a password change per user. These run before the route's handler, so a throttled guess never costs a hash.
 * - Expensive routes per user: messages and chats (`messages`), uploads (`uploads`), exports (`exports`),
 *   repository clones (`clones`).
 * Over a limit: 429 `rate_limited` with `Retry-After` (seconds) and `retry_after` in the body.
 */
import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler, RouteOptions } from 'fastify';
import { TooManyRequests } from './errors.ts';
import { errors } from './schemas.ts';
import { hooksOf } from './route-hooks.ts';

/** The limits, by name; each is `{max, windowMs}` from the configuration, or null when turned off. */
export const RATE_LIMIT_NAMES = [
  'login_account',
  'login_address',
  'signup_address',
  'password_reset_address',
  'messages',
  'uploads',
  'exports',
  'clones',
] as const;
export type RateLimitName = (typeof RATE_LIMIT_NAMES)[number];
export type RateLimits = Record<RateLimitName, { max: number; windowMs: number } | null>;

/** What a limit counts by: the signed-in user (the address when anonymous), the address, the body's e-mail. */
type By = 'user' | 'address' | 'email';
interface Rule {
  limit: RateLimitName;
  by: By;
  /** Exponential backoff once over the limit (sign-in). */
  backoff?: boolean;
  /** A successful answer clears this key (a login that succeeds forgets its account's failures). */
  clearOnSuccess?: boolean;
}

const files = '/api/crm/projects/:name/files';
const notes = '/api/crm/projects/:name/notes/:id';
/** The throttled routes (`METHOD URL` as registered) and their limits, checked in order. */
export const RULES: Record<string, Rule[]> = {
  'POST /api/auth/login': [
    { limit: 'login_address', by: 'address', backoff: true },
    { limit: 'login_account', by: 'email', backoff: true, clearOnSuccess: true },
  ],
  'POST /api/auth/change-password': [{ limit: 'login_account', by: 'user', backoff: true }],
  'POST /api/auth/register': [{ limit: 'signup_address', by: 'address' }],
  'POST /api/auth/forgot-password': [{ limit: 'password_reset_address', by: 'address' }],
  'POST /api/auth/reset-password': [{ limit: 'password_reset_address', by: 'address' }],
  'POST /api/crm/projects/:name/message': [{ limit: 'messages', by: 'user' }],
  'POST /api/crm/projects/:name/chat': [{ limit: 'messages', by: 'user' }],
  'POST /api/crm/projects/:name/workers/generate-prompt': [{ limit: 'messages', by: 'user' }],
  'POST /api/crm/help/chat': [{ limit: 'messages', by: 'user' }],
  'POST /help/chat': [{ limit: 'messages', by: 'user' }],
  [`POST ${notes}/chat`]: [{ limit: 'messages', by: 'user' }],
  [`POST ${files}/upload`]: [{ limit: 'uploads', by: 'user' }],
  [`POST ${notes}/sources`]: [{ limit: 'uploads', by: 'user' }],
  [`POST ${notes}/sources/chunk-init`]: [{ limit: 'uploads', by: 'user' }],
  [`POST ${notes}/sources/chunks/:uploadId`]: [{ limit: 'uploads', by: 'user' }],
  'POST /api/crm/projects/:name/transcripts/upload': [{ limit: 'uploads', by: 'user' }],
  'POST /api/crm/voice/transcribe': [{ limit: 'uploads', by: 'user' }],
  'POST /api/cli/transcript/:project/:modeOrSession': [{ limit: 'uploads', by: 'user' }],
  'GET /api/auth/export': [{ limit: 'exports', by: 'user' }],
  'GET /api/crm/projects/:name/wiki/download': [{ limit: 'exports', by: 'user' }],
  [`POST ${files}/clone`]: [{ limit: 'clones', by: 'user' }],
};

/** The key a rule counts for this request (`<limit>:<by>:<value>`; the store keeps only its digest). */
function keyOf(rule: Rule, req: FastifyRequest): string {
  const address = `address:${normalizeIP(req.ip)}`;
  if (rule.by === 'user') return `${rule.limit}:${req.actor ? `user:${req.actor.id}` : address}`;
  if (rule.by === 'email') {
    const email = (req.body as { email?: unknown } | undefined)?.email;
    return `${rule.limit}:${typeof email === 'string' ? `email:${email.trim().toLowerCase()}` : address}`;
  }
  return `${rule.limit}:${address}`;
}

const afterText = (s: number) =>
  s < 120 ? `${s} seconds` : s < 7200 ? `${Math.ceil(s / 60)} minutes` : `${Math.ceil(s / 3600)} hours`;

declare module 'fastify' {
  interface FastifyRequest {
    /** Keys of the throttle rules to clear when this request succeeds. */
    throttleClear?: string[];
  }
}

/**
 * Register the rate-limit plugin over the throttle area's store and attach the limits of `RULES` to the routes
 * registered after this call (call it before the routes, after authentication).
 * @param deps.store the store class (throttle service `Store`); `deps.clear` forgets a key; `deps.limits` the
 *   configured limits (a null limit is not applied).
 */
export async function installThrottle(
  app: FastifyInstance,
  deps: {
    store: new (params: object) => unknown;
    clear(key: string): Promise<void>;
    limits: RateLimits;
    log: { warn(o: object, m: string): void };
  },
): Promise<void> {
  await app.register(rateLimit, { global: false, store: deps.store as never });
  type Check = (req: FastifyRequest) => Promise<{ isExceeded: boolean; ttlInSeconds: number }>;
  const limiters = new Map<string, Check>();
  const limiterOf = (rule: Rule): Check | undefined => {
    const conf = deps.limits[rule.limit];
    if (!conf) return undefined;
    const id = `${rule.limit}:${rule.by}:${!!rule.backoff}`;
    let check = limiters.get(id);
    if (!check) {
      // `exponentialBackoff` reaches the store's child (the plugin merges every option), though its types omit it.
      const options = {
        max: conf.max,
        timeWindow: conf.windowMs,
        exponentialBackoff: !!rule.backoff,
        keyGenerator: (req: FastifyRequest) => keyOf(rule, req),
      };
      const made = app.createRateLimit(options as Parameters<FastifyInstance['createRateLimit']>[0]);
      check = made as unknown as Check;
      limiters.set(id, check);
    }
    return check;
  };

  const clearOnSuccess: onSendHookHandler = async (req, reply, payload) => {
    if (!req.throttleClear || reply.statusCode >= 400) return payload;
    for (const key of req.throttleClear)
      await deps.clear(key).catch((err) => deps.log.warn({ err: (err as Error).message }, 'rate limit not cleared'));
    return payload;
  };
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const rules = methods.flatMap((m) => RULES[`${m} ${route.url}`] ?? []);
    const active = rules.map((r) => ({ rule: r, check: limiterOf(r) })).filter((x) => x.check);
    if (!active.length) return;
    if (route.schema)
      route.schema = { ...route.schema, response: { ...(route.schema.response as object), ...errors(429) } };
    const handler = async (req: FastifyRequest, reply: FastifyReply) => {
      for (const { check } of active) {
        const r = await check!(req);
        if (!r.isExceeded) continue;
        const after = Math.max(1, r.ttlInSeconds);
        reply.header('retry-after', String(after));
        throw new TooManyRequests('rate_limited', `Too many requests; try again in ${afterText(after)}.`, {
          retry_after: after,
        });
      }
      const clear = active.filter((a) => a.rule.clearOnSuccess).map((a) => keyOf(a.rule, req));
      if (clear.length) req.throttleClear = clear;
    };
    route.preHandler = [...hooksOf(route.preHandler), handler];
    // Before the answer leaves (so the client's next request sees it): a success clears its keys. Only on the routes
    // with such a rule (sign-in), so the others run no hook for it.
    if (active.some((a) => a.rule.clearOnSuccess)) route.onSend = [...hooksOf(route.onSend), clearOnSuccess];
  });
}
