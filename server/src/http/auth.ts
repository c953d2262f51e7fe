/**
 * Central authentication (authorization is each service's first line). One `onRequest` hook turns the
 * bearer token into `req.actor`; a route declares who may call it with `config.auth`:
 *   'public'  – no token needed (a valid one still sets `req.actor`);
 *   'user'    – the default: any authenticated caller;
 *   'admin'   – role admin.
 * `config.queryToken: true` also accepts `?token=<JWT>` on GET (the event streams and the WebSocket upgrade;
 * docs/api.md, Streams): a token in a URL ends up in proxy logs, so no other method reads it, and a route of
 * another method that asks for it stops the app at registration.
 * Every request checks the stored user row (read through `UserCache` below, which every instance keeps in
 * step): `pv` below the stored `password_version` gives 401 asking for a new login. Authentication fails closed:
 * when the database cannot be reached a token is never accepted on its own claims (a revoked session or a
 * demoted admin would pass); a route that needs a caller answers 503 `auth_unavailable`, a public one goes on
 * without one.
 *
 * Access tokens (`arc_pat_…`, `arc_dev_…`; docs/api.md, Access tokens) are checked by the `AccessTokenVerifier`
 * (the accounts area's token service) and then bounded by `checkGrant`: `read` for GET, `write` for the rest,
 * one project when bound, never on admin routes or routes marked `config.accessToken: 'refused'` (password,
 * tokens, export, erasure). A route marked `'per-call'` (the MCP server) checks the scopes itself.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { DB } from '../db/types.ts';
import { AppError, Forbidden, Unauthorized, Upstream } from './errors.ts';
import type { TokenClaims, Tokens } from './tokens.ts';
import type { Bus } from '../lib/bus.ts';

/** The authenticated caller: the user's stored columns and two flags. */
export interface Actor extends Omit<AuthUserRow, 'password_version' | 'chat_id' | 'created_at'> {
  chat_id: string;
  created_at: Date | null;
  isAdmin: boolean;
  /** The operator account (`OPERATOR_EMAIL`, e-mail verified): sees all users' workers in `GET /workers`. */
  isOperator: boolean;
  /** Set when the caller came with an access token: what the token allows (absent: a session token). */
  grant?: TokenGrant;
}

export type AuthMode = 'public' | 'user' | 'admin';

/** What an access token allows (docs/api.md, Access tokens). */
export interface TokenGrant {
  tokenId: number;
  /** `personal` (made by its user) or `device` (the CLI's device link). */
  kind: 'personal' | 'device';
  /** `read`: GET and streams; `write`: everything else a user may do (and reading); `admin`: an admin's rights. */
  scopes: ReadonlyArray<'read' | 'write' | 'admin'>;
  /** The one project the token is bound to, or null for all of its user's. */
  projectId: number | null;
  projectName: string | null;
}

/** Checks access tokens for the auth hook (the accounts area's token service implements it). */
export interface AccessTokenVerifier {
  /** Whether `token` has the access-token form (anything else is taken for a session token). */
  matches(token: string): boolean;
  /**
   * Read from the store on every call (a revocation counts from the next request, on every instance).
   * @returns the token's user row and grant.
   * @throws Unauthorized (unknown, revoked, expired); TooManyRequests 429 past the failed-attempt limit.
   */
  verify(
    token: string,
    meta: { ip: string; userAgent?: string },
  ): Promise<{ user: Omit<AuthUserRow, 'password_version'>; grant: TokenGrant }>;
}

/** Whether a grant has a scope; `write` includes reading. */
export const grantAllows = (grant: Pick<TokenGrant, 'scopes'>, scope: 'read' | 'write'): boolean =>
  grant.scopes.includes(scope) || (scope === 'read' && grant.scopes.includes('write'));

/**
 * Pure: may an access token with `grant` call this route? (docs/api.md, Access tokens.)
 * @param route.url the route's pattern (`/api/crm/projects/:name/issues`), `params` its parameters.
 * @throws Forbidden 403: `session_required` (admin routes, routes marked `refused`), `insufficient_scope`
 *   (`required` names the scope), `token_project` (a project-bound token elsewhere).
 */
export function checkGrant(
  grant: TokenGrant,
  route: { mode: AuthMode; method: string; url: string; params: unknown; accessToken?: 'refused' | 'per-call' },
): void {
  if (route.mode === 'admin' || route.accessToken === 'refused')
    throw new Forbidden('This action needs a signed-in session; access tokens cannot do it.', 'session_required');
  if (route.accessToken === 'per-call') return;
  const required = route.method === 'GET' || route.method === 'HEAD' ? 'read' : 'write';
  if (!grantAllows(grant, required))
    throw new Forbidden(`This token lacks the ${required} scope.`, 'insufficient_scope', { required });
  if (grant.projectName === null || route.url === '/api/auth/me') return;
  const params = (route.params ?? {}) as Record<string, unknown>;
  const named = /\/projects\/:name(\/|$)/.test(route.url)
    ? params.name
    : route.url.includes('/:project')
      ? params.project
      : undefined;
  if (named !== grant.projectName)
    throw new Forbidden(`This token is limited to the project ${grant.projectName}.`, 'token_project');
}

declare module 'fastify' {
  interface FastifyRequest {
    actor?: Actor;
  }
  interface FastifyContextConfig {
    auth?: AuthMode;
    queryToken?: boolean;
    /** Access tokens: `refused` (session only), `per-call` (the handler checks scopes); default by method. */
    accessToken?: 'refused' | 'per-call';
  }
}

/** The authenticated caller; @throws Unauthorized when absent (only on routes marked public). */
export function requireActor(req: FastifyRequest): Actor {
  if (!req.actor) throw new Unauthorized();
  return req.actor;
}

function bearer(req: FastifyRequest): string | undefined {
  const h = req.headers.authorization;
  if (h && /^Bearer\s+/i.test(h)) return h.replace(/^Bearer\s+/i, '').trim();
  if (req.routeOptions.config?.queryToken && req.method === 'GET') {
    const q = (req.query as Record<string, unknown> | undefined)?.token;
    if (typeof q === 'string' && q) return q;
    const m = /[?&]token=([^&]+)/.exec(req.url);
    if (m) return decodeURIComponent(m[1]);
  }
  return undefined;
}

/** The user columns the auth hook reads on every request. */
export interface AuthUserRow {
  id: number;
  email: string;
  name: string | null;
  role: 'user' | 'admin';
  plan: string;
  email_verified: boolean;
  password_version: number;
  chat_id: string | null;
  created_at: Date;
}

/**
 * The Actor of a stored user row; `operatorEmail` marks the operator account. Privilege needs a verified address:
 * an account acts as an administrator (role admin) or as the operator (`OPERATOR_EMAIL`) only once its e-mail is
 * verified, so nobody becomes either by registering an address first.
 */
export function actorFromUser(row: Omit<AuthUserRow, 'password_version'>, operatorEmail?: string): Actor {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    plan: row.plan,
    email_verified: row.email_verified,
    chat_id: row.chat_id ?? String(row.id),
    created_at: row.created_at,
    isAdmin: row.role === 'admin' && row.email_verified,
    isOperator: !!operatorEmail && row.email === operatorEmail && row.email_verified,
  };
}

/**
 * A short-lived cache of the auth hook's user rows, so an authenticated request does not always pay a
 * database round trip (on the embedded database that round trip costs more than the rest of a request).
 *
 * Several instances may serve one database, so the cache is kept honest through the event bus (lib/bus.ts):
 * every change of a cached column (password_version, role, plan, email_verified, e-mail) calls `changed(id)`
 * after its commit and before answering, which drops the row here and publishes `user.changed` to every
 * instance, which drops it too.
 *
 * The bound: a change committed on any instance is honoured by every instance
 *  - before the changing request answers, normally: `changed` waits (at most DELIVERY_WAIT_MS, 1000 ms, as
 *    long as `ttlMs`) until the database server has delivered the message to this instance's own listener, and
 *    the server signals every listening instance at the same moment;
 *  - at the latest `ttlMs` (1000 ms) after the commit in every case (a lost or late message): no row is
 *    trusted longer than that after it was read, nothing is cached while the bus is not live (listener
 *    disconnected), and the cache is emptied each time the listener (re)connects.
 * A row read while an invalidation arrived is not cached (`mark`/`set`), so a read that raced a change cannot
 * put the old row back. On the embedded database (one process) the bus is in-process and every change is
 * seen by the next request.
 */
export interface UserCache {
  /** The cached row of user `id`, if fresh and the bus is live. */
  get(id: number): AuthUserRow | undefined;
  /** Take before reading a row from the store; pass to `set`. */
  mark(): number;
  /** Cache a row read after `mark` (ignored when any invalidation happened since). */
  set(row: AuthUserRow, mark: number): void;
  /** Drop user `id` (every user without an id) in this process only. */
  invalidate(id?: number): void;
  /**
   * After a committed change of user `id`: drop it here and on every instance. Resolves once the other
   * instances have been told (bounded wait, see above); never rejects.
   */
  changed(id: number): Promise<void>;
}

/**
 * @param opts.bus the event bus (invalidations to and from the other instances); without one, this process only.
 * @param opts.ttlMs how long a row is trusted after it was read (default 1000 ms; 0 = never cached).
 * @param opts.max entries kept (default 10,000; the least recently used is dropped when full).
 */
export function createUserCache(opts: { bus?: Bus; ttlMs?: number; max?: number } = {}): UserCache {
  const { bus, ttlMs = 1000, max = 10_000 } = opts;
  const entries = new LRUCache<number, { row: AuthUserRow; until: number }>({ max });
  let generation = 0;
  const invalidate = (id?: number) => {
    generation++;
    if (id === undefined) entries.clear();
    else entries.delete(id);
  };
  bus?.subscribe('user.changed', ({ id }) => invalidate(id));
  bus?.onGap(() => invalidate());
  return {
    get(id) {
      const e = entries.get(id);
      if (!e) return undefined;
      if (e.until < Date.now() || (bus && !bus.live)) {
        entries.delete(id);
        return undefined;
      }
      return e.row;
    },
    mark: () => generation,
    set(row, mark) {
      if (mark !== generation || ttlMs <= 0 || (bus && !bus.live)) return;
      entries.set(row.id, { row, until: Date.now() + ttlMs });
    },
    invalidate,
    async changed(id) {
      invalidate(id);
      if (bus) await bus.publish('user.changed', { id }, { delivered: true });
    },
  };
}

export function installAuth(
  app: FastifyInstance,
  deps: {
    db: Kysely<DB>;
    tokens: Tokens;
    operatorEmail?: string;
    userCache?: UserCache;
    accessTokens?: AccessTokenVerifier;
  },
): void {
  app.decorateRequest('actor', undefined);
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (
      (route.config as { queryToken?: boolean } | undefined)?.queryToken &&
      methods.some((m) => m !== 'GET' && m !== 'HEAD')
    )
      throw new Error(`${route.url}: ?token= is read on GET streams and WebSocket upgrades only`);
  });

  /**
   * Set `req.actor` from a verified token and its stored user row; without the row (the store unreachable) no
   * actor is set: a public route goes on without one, any other answers 503 `auth_unavailable`.
   */
  const admit = (
    req: FastifyRequest,
    mode: AuthMode,
    claims: TokenClaims,
    row: AuthUserRow | undefined,
    storeReachable: boolean,
  ): void => {
    if (!storeReachable) {
      if (mode === 'public') return;
      throw new Upstream(503, 'auth_unavailable', 'Sign-in cannot be checked right now; try again shortly.');
    }
    if (!row) {
      if (mode === 'public') return;
      throw new Unauthorized('The account of this token no longer exists.', 'invalid_token');
    }
    if (claims.pv < row.password_version) {
      throw new Unauthorized('Your password was changed; please log in again.', 'password_changed');
    }
    req.actor = actorFromUser(row, deps.operatorEmail);
    if (mode === 'admin' && !req.actor.isAdmin)
      throw new Forbidden('This action needs an administrator.', 'admin_required');
  };

  /** An access token: verified against the store (never on its own claims), then bounded by `checkGrant`. */
  const authenticateAccessToken = async (req: FastifyRequest, mode: AuthMode, token: string): Promise<void> => {
    let verified: Awaited<ReturnType<AccessTokenVerifier['verify']>>;
    try {
      verified = await deps.accessTokens!.verify(token, { ip: req.ip, userAgent: req.headers['user-agent'] });
    } catch (err) {
      if (mode === 'public') return;
      if (err instanceof AppError) throw err;
      req.log.warn({ err: (err as Error).message }, 'token store unreachable; access token refused');
      throw new Upstream(503, 'auth_unavailable', 'Access tokens cannot be checked right now; try again.');
    }
    const actor = actorFromUser(verified.user, deps.operatorEmail);
    const grant = verified.grant;
    const cfg = req.routeOptions.config;
    try {
      checkGrant(grant, {
        mode,
        method: req.method,
        url: req.routeOptions.url ?? '',
        params: req.params,
        accessToken: cfg?.accessToken,
      });
    } catch (err) {
      if (mode === 'public') return; // a public route answers as for an anonymous caller
      throw err;
    }
    req.actor = { ...actor, isAdmin: actor.isAdmin && grant.scopes.includes('admin'), grant };
  };

  /** The full path: verify the token, read the user row. */
  const authenticate = async (req: FastifyRequest, mode: AuthMode, token: string): Promise<void> => {
    if (deps.accessTokens?.matches(token)) return authenticateAccessToken(req, mode, token);
    const claims = await deps.tokens.verify(token);
    if (!claims || 'expired' in claims) {
      if (mode === 'public') return;
      throw claims
        ? new Unauthorized('Your session has expired; please log in again.', 'token_expired')
        : new Unauthorized('The token is not valid.', 'invalid_token');
    }
    let row: AuthUserRow | undefined = deps.userCache?.get(claims.sub);
    let storeReachable = true;
    if (!row) {
      const mark = deps.userCache?.mark() ?? 0;
      try {
        row = await deps.db
          .selectFrom('users')
          .select([
            'id',
            'email',
            'name',
            'role',
            'plan',
            'email_verified',
            'password_version',
            'chat_id',
            'created_at',
          ])
          .where('id', '=', claims.sub)
          .executeTakeFirst();
        if (row) deps.userCache?.set(row, mark);
      } catch (err) {
        storeReachable = false;
        req.log.warn({ err: (err as Error).message }, 'user store unreachable; the token cannot be checked');
      }
    }
    admit(req, mode, claims, row, storeReachable);
  };

  // A callback hook with a synchronous fast path (token and user row both cached): most authenticated
  // requests finish authentication without a promise.
  app.addHook('onRequest', (req, _reply, done) => {
    try {
      // `routeOptions` is a getter building a new object: read once.
      const route = req.routeOptions;
      if (!route.url) return done(); // unknown route: the not-found handler answers
      const mode: AuthMode = route.config?.auth ?? 'user';
      const token = bearer(req);
      if (!token) {
        if (mode === 'public') return done();
        return done(new Unauthorized('A bearer token is required.', 'unauthorized'));
      }
      const claims = deps.tokens.peek(token);
      const row = claims ? deps.userCache?.get(claims.sub) : undefined;
      if (claims && row) {
        admit(req, mode, claims, row, true);
        return done();
      }
      authenticate(req, mode, token).then(() => done(), done);
    } catch (err) {
      done(err as Error);
    }
  });
}
