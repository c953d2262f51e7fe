/**
 * Access tokens: a user's own credentials for programs (docs/api.md, Access tokens).
 *
 * - Personal access tokens: created, named and scoped by their user (`read`, `write`; `admin` for
 *   administrators only), optionally bound to one project and given an expiry of 1–365 days; listed with
 *   their prefix, creation, last use and expiry; revoked by their user. At most `TOKENS_MAX` live ones.
 * - Device credentials: issued by the CLI's device link (`issueDevice`), tied to the device id, revoked from
 *   the CLI devices list; a new link of the same device replaces the old credential.
 * - Storage: only the SHA-256 of a token (`arc_pat_…`, `arc_dev_…`: 32 random bytes) and a 12-character
 *   prefix are kept; the token is shown once, in the answer that creates it.
 * - The check (`verify`, the auth hook's verifier): unknown, revoked and expired tokens answer 401 and count as
 *   failed attempts of the client address (`auth_events` `token_failed`); past `FAILURES_MAX` in
 *   `FAILURE_WINDOW_MS` the address gets 429 `too_many_attempts`. A use after an hour of silence writes
 *   `token_auth` (the login of a token); creation and revocation write `token_created`, `token_revoked`.
 */
import crypto from 'node:crypto';
import type { Access } from '../../access/access.ts';
import type { AccessTokenVerifier, Actor, TokenGrant } from '../../http/auth.ts';
import { BadRequest, Conflict, Forbidden, NotFound, TooManyRequests, Unauthorized } from '../../http/errors.ts';
import { sha256hex } from '../../secrets/crypto.ts';
import type { ProjectsRepo } from '../projects/projects.repo.ts';
import type { AccountsRepo } from './accounts.repo.ts';
import type { RequestMeta } from './accounts.service.ts';
import type { TokenKind, TokenRow, TokenScope, TokensRepo } from './tokens.repo.ts';

/** Live personal tokens a user may hold. */
export const TOKENS_MAX = 50;
/** Failed token attempts an address may make in the window before it is answered 429. */
export const FAILURES_MAX = 20;
export const FAILURE_WINDOW_MS = 15 * 60_000;
/** `last_used_at` is written at most this often per token (ms). */
const TOUCH_EVERY_MS = 60_000;
/** A use after this much silence is audited as a `token_auth` event (ms). */
const AUDIT_AFTER_MS = 3600_000;

const PREFIX: Record<TokenKind, string> = { personal: 'arc_pat_', device: 'arc_dev_' };
const TOKEN_FORM = /^arc_(pat|dev)_[A-Za-z0-9_-]{43}$/;

/** A token as its owner sees it (`GET /account/tokens`). */
export interface TokenView {
  id: number;
  name: string;
  kind: TokenKind;
  prefix: string;
  scopes: TokenScope[];
  project: string | null;
  device_id: string | null;
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
}

export interface TokensDeps {
  repo: TokensRepo;
  /** Audit rows (`auth_events`). */
  events: Pick<AccountsRepo, 'insertAuthEvent'>;
  /** Project names of bound tokens. */
  projects: Pick<ProjectsRepo, 'namesAndOwners'>;
  access: Pick<Access, 'project'>;
}

/** Pure: the scopes of a request, de-duplicated in the order read, write, admin. @throws BadRequest when empty. */
export function normalizeScopes(scopes: readonly string[]): TokenScope[] {
  const out = (['read', 'write', 'admin'] as const).filter((s) => scopes.includes(s));
  if (!out.length) throw new BadRequest('invalid_scopes', 'Give at least one scope: read, write or admin.');
  return out;
}

/** Pure: whether a string has the form of an access token (else it is taken for a session token). */
export const isAccessToken = (token: string): boolean => token.startsWith('arc_pat_') || token.startsWith('arc_dev_');

export function createTokensService(deps: TokensDeps) {
  const { repo } = deps;

  const newToken = (kind: TokenKind) => {
    const token = `${PREFIX[kind]}${crypto.randomBytes(32).toString('base64url')}`;
    return { token, hash: sha256hex(token), prefix: token.slice(0, 12) };
  };

  async function projectNames(rows: Array<{ project_id: number | null }>) {
    const ids = [...new Set(rows.map((r) => r.project_id).filter((id): id is number => id !== null))];
    return deps.projects.namesAndOwners(ids);
  }

  const view = (r: TokenRow, names: Map<number, { name: string }>): TokenView => ({
    id: r.id,
    name: r.name,
    kind: r.kind,
    prefix: r.prefix,
    scopes: r.scopes,
    project: r.project_id === null ? null : (names.get(r.project_id)?.name ?? null),
    device_id: r.device_id,
    created_at: r.created_at,
    expires_at: r.expires_at,
    last_used_at: r.last_used_at,
  });

  const audit = (userId: number | null, type: string, meta?: RequestMeta) =>
    deps.events.insertAuthEvent({
      userId,
      type,
      ip: meta?.ip ?? null,
      userAgent: meta?.userAgent?.slice(0, 300) ?? null,
    });

  /** A failed attempt: counted for the address; 429 past the limit, else `fail`. */
  async function failed(userId: number | null, meta: RequestMeta, fail: Unauthorized): Promise<never> {
    await repo.recordFailure({ userId, ip: meta.ip, userAgent: meta.userAgent?.slice(0, 300) ?? null });
    const n = await repo.failuresSince(meta.ip, new Date(Date.now() - FAILURE_WINDOW_MS));
    if (n > FAILURES_MAX)
      throw new TooManyRequests('too_many_attempts', 'Too many failed token attempts from this address; wait.', {
        retry_after_s: Math.round(FAILURE_WINDOW_MS / 1000),
      });
    throw fail;
  }

  const verifier: AccessTokenVerifier = {
    matches: isAccessToken,
    async verify(token, meta) {
      if (!TOKEN_FORM.test(token))
        return failed(null, meta, new Unauthorized('The token is not valid.', 'invalid_token'));
      const row = await repo.byHash(sha256hex(token));
      if (!row) return failed(null, meta, new Unauthorized('The token is not valid.', 'invalid_token'));
      if (row.revoked_at)
        return failed(row.user_id, meta, new Unauthorized('This token was revoked.', 'token_revoked'));
      if (row.expires_at && row.expires_at.getTime() <= Date.now())
        return failed(row.user_id, meta, new Unauthorized('This token has expired.', 'token_expired'));
      const idle = row.last_used_at ? Date.now() - row.last_used_at.getTime() : Infinity;
      if (idle > TOUCH_EVERY_MS) {
        await repo.touch(row.id, meta.ip);
        if (idle > AUDIT_AFTER_MS) await audit(row.user_id, 'token_auth', meta);
      }
      let projectName: string | null = null;
      if (row.project_id !== null) {
        projectName = (await deps.projects.namesAndOwners([row.project_id])).get(row.project_id)?.name ?? null;
        if (projectName === null) return failed(row.user_id, meta, new Unauthorized('The token is not valid.'));
      }
      const grant: TokenGrant = {
        tokenId: row.id,
        kind: row.kind,
        scopes: row.scopes,
        projectId: row.project_id,
        projectName,
      };
      return { user: row.user, grant };
    },
  };

  return {
    /** The auth hook's check of `arc_pat_…` / `arc_dev_…` bearer tokens (http/auth.ts). */
    verifier,

    /**
     * POST /api/crm/account/tokens `{name, scopes, project?, expires_in_days?}` → 201
     * `{id, name, token, prefix, scopes, project, created_at, expires_at}`; `token` appears only here.
     * @throws 403 `admin_required` for the admin scope of a non-admin; 404/403 from the project check;
     *   409 `token_limit` past TOKENS_MAX live tokens.
     */
    async create(
      actor: Actor,
      body: { name: string; scopes: string[]; project?: string | null; expires_in_days?: number },
      meta: RequestMeta,
    ) {
      const scopes = normalizeScopes(body.scopes);
      if (scopes.includes('admin') && !actor.isAdmin)
        throw new Forbidden('Only administrators may give a token the admin scope.', 'admin_required');
      const project = body.project ? await deps.access.project(actor, body.project) : null;
      if ((await repo.countLive(actor.id)) >= TOKENS_MAX)
        throw new Conflict('token_limit', `You have ${TOKENS_MAX} live tokens; revoke one first.`);
      const t = newToken('personal');
      const expiresAt = body.expires_in_days ? new Date(Date.now() + body.expires_in_days * 86_400_000) : null;
      const row = await repo.insert({
        userId: actor.id,
        name: body.name.trim(),
        kind: 'personal',
        hash: t.hash,
        prefix: t.prefix,
        scopes,
        projectId: project?.id ?? null,
        deviceId: null,
        expiresAt,
      });
      await audit(actor.id, 'token_created', meta);
      const {
        kind: _kind,
        device_id: _device,
        last_used_at: _used,
        ...shown
      } = view(row, new Map(project ? [[project.id, { name: project.name }]] : []));
      return { ...shown, token: t.token };
    },

    /** GET /api/crm/account/tokens → `{tokens}`: the caller's live and expired tokens (not revoked), newest first. */
    async list(actor: Actor): Promise<{ tokens: TokenView[] }> {
      const rows = await repo.listActive(actor.id);
      const names = await projectNames(rows);
      return { tokens: rows.map((r) => view(r, names)) };
    },

    /** DELETE /api/crm/account/tokens/:id → `{ok:true}`. @throws NotFound `token_not_found`. */
    async revoke(actor: Actor, id: number, meta: RequestMeta) {
      const r = await repo.revoke(actor.id, id);
      if (!r) throw new NotFound('You have no live token with this id.', 'token_not_found');
      await audit(actor.id, 'token_revoked', meta);
      return { ok: true as const };
    },

    /**
     * A device credential for the CLI (read and write, every project, no expiry), named after the device;
     * earlier credentials of the same device are revoked. @returns the token (shown once).
     */
    async issueDevice(userId: number, device: { deviceId: string | null; hostname: string | null }) {
      if (device.deviceId) await repo.revokeDevice(userId, device.deviceId);
      const t = newToken('device');
      await repo.insert({
        userId,
        name: `arc on ${device.hostname?.trim() || 'a device'}`.slice(0, 100),
        kind: 'device',
        hash: t.hash,
        prefix: t.prefix,
        scopes: ['read', 'write'],
        projectId: null,
        deviceId: device.deviceId,
        expiresAt: null,
      });
      return t.token;
    },

    /** Revoke the credentials of one of the user's devices. @returns how many were revoked. */
    async revokeDevice(userId: number, deviceId: string, meta: RequestMeta) {
      const n = await repo.revokeDevice(userId, deviceId);
      if (n) await audit(userId, 'token_revoked', meta);
      return n;
    },

    /** The user's live device credentials by device id (the CLI devices list). */
    deviceCredentials: (userId: number) => repo.deviceCredentials(userId),
  };
}

export type TokensService = ReturnType<typeof createTokensService>;
