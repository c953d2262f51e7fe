/**
 * The SQL of access tokens and device credentials (`access_tokens`) and the failed-attempt counts the token
 * check throttles on (`auth_events`, type `token_failed`). Only a token's SHA-256 is stored; every read by a
 * user filters by that user.
 */
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/types.ts';

export type TokenScope = 'read' | 'write' | 'admin';
export type TokenKind = 'personal' | 'device';

/** A token as its owner sees it (never the hash). */
export interface TokenRow {
  id: number;
  name: string;
  kind: TokenKind;
  prefix: string;
  scopes: TokenScope[];
  project_id: number | null;
  device_id: string | null;
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
}

/** What the token check needs of a stored token, with its user's columns (those of the auth hook). */
export interface TokenCheckRow extends TokenRow {
  user_id: number;
  revoked_at: Date | null;
  user: {
    id: number;
    email: string;
    name: string | null;
    role: 'user' | 'admin';
    plan: string;
    email_verified: boolean;
    chat_id: string | null;
    created_at: Date;
  };
}

const LIST_COLS = [
  'id',
  'name',
  'kind',
  'prefix',
  'scopes',
  'project_id',
  'device_id',
  'created_at',
  'expires_at',
  'last_used_at',
] as const;

export function createTokensRepo(db: Kysely<DB>) {
  return {
    /** Store a new token by its hash. @returns the stored row. */
    insert: (t: {
      userId: number;
      name: string;
      kind: TokenKind;
      hash: string;
      prefix: string;
      scopes: TokenScope[];
      projectId: number | null;
      deviceId: string | null;
      expiresAt: Date | null;
    }): Promise<TokenRow> =>
      db
        .insertInto('access_tokens')
        .values({
          user_id: t.userId,
          name: t.name,
          kind: t.kind,
          token_hash: t.hash,
          prefix: t.prefix,
          scopes: JSON.stringify(t.scopes),
          project_id: t.projectId,
          device_id: t.deviceId,
          expires_at: t.expiresAt,
        })
        .returning([...LIST_COLS])
        .executeTakeFirstOrThrow(),

    /** The user's tokens that are not revoked, newest first. */
    listActive: (userId: number): Promise<TokenRow[]> =>
      db
        .selectFrom('access_tokens')
        .select([...LIST_COLS])
        .where('user_id', '=', userId)
        .where('revoked_at', 'is', null)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .execute(),

    /** Number of the user's personal tokens neither revoked nor expired. */
    async countLive(userId: number): Promise<number> {
      const r = await db
        .selectFrom('access_tokens')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('user_id', '=', userId)
        .where('kind', '=', 'personal')
        .where('revoked_at', 'is', null)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', sql<Date>`now()`)]))
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },

    /** A token by its hash, revoked or not, with its user (one query), or undefined. */
    async byHash(hash: string): Promise<TokenCheckRow | undefined> {
      const r = await db
        .selectFrom('access_tokens as t')
        .innerJoin('users as u', 'u.id', 't.user_id')
        .select([
          't.id',
          't.name',
          't.kind',
          't.prefix',
          't.scopes',
          't.project_id',
          't.device_id',
          't.created_at',
          't.expires_at',
          't.last_used_at',
          't.user_id',
          't.revoked_at',
          'u.email',
          'u.name as user_name',
          'u.role',
          'u.plan',
          'u.email_verified',
          'u.chat_id',
          'u.created_at as user_created_at',
        ])
        .where('t.token_hash', '=', hash)
        .executeTakeFirst();
      if (!r) return undefined;
      const { email, user_name, role, plan, email_verified, chat_id, user_created_at, ...token } = r;
      return {
        ...token,
        user: {
          id: r.user_id,
          email,
          name: user_name,
          role,
          plan,
          email_verified,
          chat_id,
          created_at: user_created_at,
        },
      };
    },

    /** Note a use (`last_used_at` now, the client address). */
    async touch(id: number, ip: string | null): Promise<void> {
      await db
        .updateTable('access_tokens')
        .set({ last_used_at: sql`now()`, last_used_ip: ip })
        .where('id', '=', id)
        .execute();
    },

    /** Revoke one of the user's live tokens. @returns the revoked token, or undefined when there was none. */
    revoke: (userId: number, id: number) =>
      db
        .updateTable('access_tokens')
        .set({ revoked_at: sql`now()` })
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .where('revoked_at', 'is', null)
        .returning(['id', 'kind', 'device_id'])
        .executeTakeFirst(),

    /** Revoke every live credential of one of the user's devices. @returns how many. */
    async revokeDevice(userId: number, deviceId: string): Promise<number> {
      const r = await db
        .updateTable('access_tokens')
        .set({ revoked_at: sql`now()` })
        .where('user_id', '=', userId)
        .where('kind', '=', 'device')
        .where('device_id', '=', deviceId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(r.numUpdatedRows);
    },

    /** The user's live device credentials by device id (the newest per device). */
    async deviceCredentials(userId: number): Promise<Map<string, Pick<TokenRow, 'id' | 'prefix' | 'last_used_at'>>> {
      const rows = await db
        .selectFrom('access_tokens')
        .select(['id', 'prefix', 'last_used_at', 'device_id'])
        .where('user_id', '=', userId)
        .where('kind', '=', 'device')
        .where('revoked_at', 'is', null)
        .where('device_id', 'is not', null)
        .orderBy('id', 'asc')
        .execute();
      return new Map(rows.map((r) => [r.device_id!, { id: r.id, prefix: r.prefix, last_used_at: r.last_used_at }]));
    },

    /** Record a failed attempt from `ip` (user id when the token was known). */
    async recordFailure(e: { userId: number | null; ip: string; userAgent: string | null }): Promise<void> {
      await db
        .insertInto('auth_events')
        .values({ user_id: e.userId, type: 'token_failed', ip: e.ip, user_agent: e.userAgent })
        .execute();
    },

    /** Failed token attempts from `ip` since `since`. */
    async failuresSince(ip: string, since: Date): Promise<number> {
      const r = await db
        .selectFrom('auth_events')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('ip', '=', ip)
        .where('type', '=', 'token_failed')
        .where('created_at', '>', since)
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },

    /** The export's `access_tokens` of a user: names, prefixes, scopes and dates (never hashes). */
    exportUser: (userId: number) =>
      db
        .selectFrom('access_tokens')
        .select([...LIST_COLS, 'revoked_at'])
        .where('user_id', '=', userId)
        .orderBy('id')
        .execute(),
  };
}

export type TokensRepo = ReturnType<typeof createTokensRepo>;
