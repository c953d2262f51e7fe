/**
 * SQL of the accounts area: `users`, `invites`, `signups`, `email_tokens`, `beta_waitlist`,
 * `account_settings`, `auth_events` and `user_identities`. Other areas ask the accounts services or this repository (the plan
 * lookup of the usage area, onboarding's reset of the heard-source field); only the auth hook and the access
 * rules read `users` themselves.
 *
 * Methods that may run inside a caller's transaction take an executor (`ex`), first when they only make sense
 * inside one (locks, `for update`), last and optional otherwise.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { pagedById, purgeOlderThan } from '../../db/privacy-sql.ts';
import type { AuthUserRow } from '../../http/auth.ts';
import type { Owner } from '../usage/usage.rules.ts';

export type Executor = Kysely<DB> | Transaction<DB>;

/** The plan and role an unknown user reads as (a deleted account's late call): a free user. */
const UNKNOWN_OWNER: Owner = { plan: 'free', role: 'user' };

/** The user columns the accounts area reads: those of the auth hook (never the password hash). */
export const USER_COLS = [
  'id',
  'email',
  'name',
  'role',
  'plan',
  'email_verified',
  'password_version',
  'chat_id',
  'created_at',
] as const;

/** A new user row (defaults: role user, plan free, e-mail unverified, no chat id). */
export interface NewUser {
  email: string;
  /** null: no password (an account made through the identity provider). */
  passwordHash: string | null;
  name?: string | null;
  role?: 'user' | 'admin';
  plan?: string;
  emailVerified?: boolean;
}

export function createAccountsRepo(db: Kysely<DB>) {
  return {
    /** Run `fn` in one transaction; pass `tx` to every call inside it. */
    transaction: <T>(fn: (tx: Transaction<DB>) => Promise<T>): Promise<T> => db.transaction().execute(fn),

    // Users.

    /** A user's plan and role; an unknown user reads as a free user. */
    async planOf(userId: number): Promise<Owner> {
      const u = await db.selectFrom('users').select(['plan', 'role']).where('id', '=', userId).executeTakeFirst();
      return u ?? UNKNOWN_OWNER;
    },

    /** The user with this (normalized) e-mail, or undefined. */
    userByEmail: (email: string, ex: Executor = db): Promise<AuthUserRow | undefined> =>
      ex.selectFrom('users').select(USER_COLS).where('email', '=', email).executeTakeFirst(),

    /** The user with this id, or undefined. */
    userById: (id: number, ex: Executor = db): Promise<AuthUserRow | undefined> =>
      ex.selectFrom('users').select(USER_COLS).where('id', '=', id).executeTakeFirst(),

    /**
     * The user with this (normalized) e-mail and their argon2id password hash (login; null: the account has no
     * password), or undefined.
     */
    credentialsByEmail: (email: string): Promise<(AuthUserRow & { password_hash: string | null }) | undefined> =>
      db
        .selectFrom('users')
        .select([...USER_COLS, 'password_hash'])
        .where('email', '=', email)
        .executeTakeFirst(),

    /** A user's argon2id password hash; null when the account has no password; undefined for an unknown user. */
    async passwordHashOf(userId: number): Promise<string | null | undefined> {
      const r = await db.selectFrom('users').select('password_hash').where('id', '=', userId).executeTakeFirst();
      return r?.password_hash;
    },

    /** Whether a user has this (normalized) e-mail. */
    async emailTaken(ex: Executor, email: string): Promise<boolean> {
      return !!(await ex.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst());
    },

    /**
     * Insert a user row (the caller checked `emailTaken` in the same transaction; the unique index still
     * refuses a duplicate). @returns the row as the auth hook reads it.
     */
    insertUser: (ex: Executor, u: NewUser): Promise<AuthUserRow> =>
      ex
        .insertInto('users')
        .values({
          email: u.email,
          name: u.name ?? null,
          password_hash: u.passwordHash,
          role: u.role ?? 'user',
          plan: u.plan ?? 'free',
          email_verified: u.emailVerified ?? false,
          chat_id: null,
        })
        .returning(USER_COLS)
        .executeTakeFirstOrThrow(),

    // Identities at the OpenID provider (`user_identities`).

    /** The account linked to identity `subject` of `issuer`, or undefined. */
    async identityUser(issuer: string, subject: string): Promise<number | undefined> {
      const r = await db
        .selectFrom('user_identities')
        .select('user_id')
        .where('issuer', '=', issuer)
        .where('subject', '=', subject)
        .executeTakeFirst();
      return r?.user_id;
    },

    /** A user's linked identities, oldest first. */
    identitiesOf: (userId: number) =>
      db
        .selectFrom('user_identities')
        .select(['issuer', 'subject', 'email', 'created_at'])
        .where('user_id', '=', userId)
        .orderBy('id')
        .execute(),

    /**
     * Link an identity to a user. @returns false when the identity is linked already, or the user has one at this
     * issuer (the unique indexes refused it: two callbacks at once)
     */
    async insertIdentity(
      i: { userId: number; issuer: string; subject: string; email: string | null },
      ex: Executor = db,
    ): Promise<boolean> {
      try {
        await ex
          .insertInto('user_identities')
          .values({ user_id: i.userId, issuer: i.issuer, subject: i.subject, email: i.email })
          .execute();
        return true;
      } catch (err) {
        if ((err as { code?: string }).code === '23505') return false;
        throw err;
      }
    },

    /** Unlink every identity of a user. */
    async deleteIdentities(userId: number): Promise<void> {
      await db.deleteFrom('user_identities').where('user_id', '=', userId).execute();
    },

    /** Whether a user has a password (accounts made through the identity provider have none until they set one). */
    async hasPassword(userId: number): Promise<boolean> {
      const r = await db.selectFrom('users').select('password_hash').where('id', '=', userId).executeTakeFirst();
      return !!r?.password_hash;
    },

    /** Set a user's chat id (accounts made here: the user id as a string). */
    async setChatId(ex: Executor, userId: number, chatId: string): Promise<void> {
      await ex.updateTable('users').set({ chat_id: chatId }).where('id', '=', userId).execute();
    },

    /** Mark a user's e-mail verified. */
    async markEmailVerified(ex: Executor, userId: number): Promise<void> {
      await ex
        .updateTable('users')
        .set({ email_verified: true, updated_at: new Date() })
        .where('id', '=', userId)
        .execute();
    },

    /**
     * Store a new password hash and increment `password_version` (every earlier token stops working);
     * `verifyEmail` also marks the e-mail verified (a reset link proves the address).
     * @returns the updated row, or undefined for an unknown user.
     */
    setPassword: (
      ex: Executor,
      userId: number,
      passwordHash: string,
      opts: { verifyEmail?: boolean } = {},
    ): Promise<AuthUserRow | undefined> =>
      ex
        .updateTable('users')
        .set({
          password_hash: passwordHash,
          password_version: sql`password_version + 1`,
          ...(opts.verifyEmail ? { email_verified: true } : {}),
          updated_at: new Date(),
        })
        .where('id', '=', userId)
        .returning(USER_COLS)
        .executeTakeFirst(),

    /** Set a user's plan. @returns the stored plan, or undefined for an unknown user. */
    async setPlan(userId: number, plan: string): Promise<string | undefined> {
      const r = await db
        .updateTable('users')
        .set({ plan, updated_at: new Date() })
        .where('id', '=', userId)
        .returning('plan')
        .executeTakeFirst();
      return r?.plan;
    },

    /** A user's plan, the row locked for the rest of the transaction (billing decides on it). */
    async planForUpdate(tx: Transaction<DB>, userId: number): Promise<string | undefined> {
      const r = await tx.selectFrom('users').select('plan').where('id', '=', userId).forUpdate().executeTakeFirst();
      return r?.plan;
    },

    /**
     * Change a user's plan inside the caller's transaction, locking the row first (billing).
     * @returns the plan before and after, or undefined for an unknown user.
     */
    async replacePlan(ex: Executor, userId: number, plan: string): Promise<{ from: string; to: string } | undefined> {
      const old = await ex.selectFrom('users').select('plan').where('id', '=', userId).forUpdate().executeTakeFirst();
      if (!old) return undefined;
      if (old.plan !== plan)
        await ex.updateTable('users').set({ plan, updated_at: new Date() }).where('id', '=', userId).execute();
      return { from: old.plan, to: plan };
    },

    /** The newest `limit` users (by id, descending). */
    listUsers: (limit: number): Promise<AuthUserRow[]> =>
      db.selectFrom('users').select(USER_COLS).orderBy('id', 'desc').limit(limit).execute(),

    /** Number of users. */
    async countUsers(): Promise<number> {
      const r = await db
        .selectFrom('users')
        .select(sql<number>`count(*)::int`.as('n'))
        .executeTakeFirstOrThrow();
      return r.n;
    },

    /** Clear the "how did you hear about us" answer (onboarding reset). */
    async clearHeardSource(ex: Executor, userId: number): Promise<void> {
      await ex.updateTable('users').set({ heard_source: null }).where('id', '=', userId).execute();
    },

    // Signups and auth events.

    /** Serialize registrations from one client address for the rest of the transaction. */
    async lockSignupAddress(tx: Transaction<DB>, ip: string): Promise<void> {
      await sql`select pg_advisory_xact_lock(hashtext(${`signup:${ip}`}))`.execute(tx);
    },

    /** Accounts registered from `ip` in the last 24 hours (database clock). */
    async recentSignups(ip: string, ex: Executor = db): Promise<number> {
      const r = await ex
        .selectFrom('signups')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('ip', '=', ip)
        .where('created_at', '>', sql<Date>`now() - interval '24 hours'`)
        .executeTakeFirstOrThrow();
      return r.n;
    },

    /** Count one registration from `ip` toward its signup limit. */
    async insertSignup(ex: Executor, ip: string, userId: number): Promise<void> {
      await ex.insertInto('signups').values({ ip, user_id: userId }).execute();
    },

    /** Record an auth event (register, login, login_failed, password_reset, password_change). */
    async insertAuthEvent(
      e: { userId: number | null; type: string; ip: string | null; userAgent: string | null },
      ex: Executor = db,
    ): Promise<void> {
      await ex
        .insertInto('auth_events')
        .values({ user_id: e.userId, type: e.type, ip: e.ip, user_agent: e.userAgent })
        .execute();
    },

    // E-mail tokens (verification and reset links; only the sha-256 of a token is stored).

    /** Store a link token by its sha-256 (`tokenHash`). */
    async insertEmailToken(
      t: { userId: number; kind: 'verify' | 'reset'; tokenHash: string; expiresAt: Date },
      ex: Executor = db,
    ): Promise<void> {
      await ex
        .insertInto('email_tokens')
        .values({ user_id: t.userId, kind: t.kind, token_hash: t.tokenHash, expires_at: t.expiresAt })
        .execute();
    },

    /** Tokens of a kind made for a user since `since`. */
    async countEmailTokensSince(userId: number, kind: 'verify' | 'reset', since: Date): Promise<number> {
      const r = await db
        .selectFrom('email_tokens')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('user_id', '=', userId)
        .where('kind', '=', kind)
        .where('created_at', '>', since)
        .executeTakeFirstOrThrow();
      return r.n;
    },

    /** The user of an unused, unexpired token of a kind, or undefined. */
    async validEmailToken(tokenHash: string, kind: 'verify' | 'reset'): Promise<number | undefined> {
      const r = await db
        .selectFrom('email_tokens')
        .select('user_id')
        .where('token_hash', '=', tokenHash)
        .where('kind', '=', kind)
        .where('used_at', 'is', null)
        .where('expires_at', '>', new Date())
        .executeTakeFirst();
      return r?.user_id;
    },

    /**
     * Mark a token used when it is unused and, with `kind`, of that kind and unexpired.
     * @returns its user, or undefined when no token qualified.
     */
    async useEmailToken(ex: Executor, tokenHash: string, kind?: 'verify' | 'reset'): Promise<number | undefined> {
      let q = ex
        .updateTable('email_tokens')
        .set({ used_at: new Date() })
        .where('token_hash', '=', tokenHash)
        .where('used_at', 'is', null);
      if (kind) q = q.where('kind', '=', kind).where('expires_at', '>', new Date());
      const r = await q.returning('user_id').executeTakeFirst();
      return r?.user_id;
    },

    // Invite codes.

    /** Insert a code unless it exists. @returns whether it was inserted. */
    async insertInvite(
      i: { code: string; note: string | null; createdBy: number | null },
      ex: Executor = db,
    ): Promise<boolean> {
      const r = await ex
        .insertInto('invites')
        .values({ code: i.code, note: i.note, created_by: i.createdBy })
        .onConflict((oc) => oc.column('code').doNothing())
        .returning('code')
        .executeTakeFirst();
      return !!r;
    },

    /** Every code, newest first, with the e-mail of the user who used it. */
    listInvites: () =>
      db
        .selectFrom('invites')
        .leftJoin('users', 'users.id', 'invites.used_by')
        .select([
          'invites.code',
          'invites.note',
          'invites.created_at',
          'invites.used_at',
          'users.email as used_by_email',
        ])
        .orderBy('invites.created_at', 'desc')
        .orderBy('invites.code')
        .execute(),

    /** Mark an unused code used (its user is set by `setInviteUser`). @returns whether it was unused. */
    async consumeInvite(ex: Executor, code: string): Promise<boolean> {
      const r = await ex
        .updateTable('invites')
        .set({ used_at: new Date() })
        .where('code', '=', code)
        .where('used_at', 'is', null)
        .returning('code')
        .executeTakeFirst();
      return !!r;
    },

    /** Record who used a code. */
    async setInviteUser(ex: Executor, code: string, userId: number): Promise<void> {
      await ex.updateTable('invites').set({ used_by: userId }).where('code', '=', code).execute();
    },

    /** Delete a code when unused. @returns whether one was deleted. */
    async deleteUnusedInvite(code: string): Promise<boolean> {
      const r = await db
        .deleteFrom('invites')
        .where('code', '=', code)
        .where('used_at', 'is', null)
        .returning('code')
        .executeTakeFirst();
      return !!r;
    },

    /** Whether a code exists (used or not). */
    async inviteExists(code: string): Promise<boolean> {
      return !!(await db.selectFrom('invites').select('code').where('code', '=', code).executeTakeFirst());
    },

    // Beta waitlist.

    /** Add an open application; nothing happens when the e-mail already has an open one. */
    async insertWaitlistEntry(email: string, message: string | null): Promise<void> {
      await db
        .insertInto('beta_waitlist')
        .values({ email, message })
        .onConflict((oc) => oc.column('email').where('status', '=', 'open').doNothing())
        .execute();
    },

    /** The newest `limit` applications. */
    listWaitlist: (limit: number) =>
      db
        .selectFrom('beta_waitlist')
        .select(['id', 'email', 'message', 'status', 'created_at'])
        .orderBy('id', 'desc')
        .limit(limit)
        .execute(),

    /** An application, locked for the rest of the transaction, or undefined. */
    waitlistEntryForUpdate: (tx: Transaction<DB>, id: number) =>
      tx
        .selectFrom('beta_waitlist')
        .select(['id', 'email', 'status'])
        .where('id', '=', id)
        .forUpdate()
        .executeTakeFirst(),

    /** Mark an application approved with the invite code made for it. */
    async approveWaitlistEntry(ex: Executor, id: number, inviteCode: string): Promise<void> {
      await ex
        .updateTable('beta_waitlist')
        .set({ status: 'approved', invite_code: inviteCode, decided_at: new Date() })
        .where('id', '=', id)
        .execute();
    },

    /** Reject an open application. @returns whether it was open. */
    async rejectOpenWaitlistEntry(id: number): Promise<boolean> {
      const r = await db
        .updateTable('beta_waitlist')
        .set({ status: 'rejected', decided_at: new Date() })
        .where('id', '=', id)
        .where('status', '=', 'open')
        .returning('id')
        .executeTakeFirst();
      return !!r;
    },

    /** The state of an application, or undefined for an unknown id. */
    async waitlistStatus(id: number): Promise<'open' | 'approved' | 'rejected' | undefined> {
      const r = await db.selectFrom('beta_waitlist').select('status').where('id', '=', id).executeTakeFirst();
      return r?.status;
    },

    // Account settings.

    /** A user's stored settings (the LLM key sealed), or undefined when never saved. */
    settingsOf: (userId: number) =>
      db
        .selectFrom('account_settings')
        .select(['llm_key_enc', 'upload_transcripts'])
        .where('user_id', '=', userId)
        .executeTakeFirst(),

    /**
     * A user's sealed LLM key (null when none is stored) with their plan and role (`owner`; an unknown user reads as
     * a free user, as in `planOf`), in one read: a model call's billing needs both.
     */
    async keyAndPlanOf(userId: number): Promise<{ llm_key_enc: string | null; owner: Owner }> {
      const row = await db
        .selectFrom('users')
        .leftJoin('account_settings as s', 's.user_id', 'users.id')
        .select(['users.plan', 'users.role', 's.llm_key_enc'])
        .where('users.id', '=', userId)
        .executeTakeFirst();
      return row
        ? { llm_key_enc: row.llm_key_enc, owner: { plan: row.plan, role: row.role } }
        : { llm_key_enc: null, owner: UNKNOWN_OWNER };
    },

    /**
     * Save the fields of `patch` (absent fields stay as they are; a first save fills them with the
     * defaults: no key, transcripts not uploaded).
     */
    async upsertSettings(
      userId: number,
      patch: { llm_key_enc?: string | null; upload_transcripts?: boolean },
    ): Promise<void> {
      await db
        .insertInto('account_settings')
        .values({
          user_id: userId,
          llm_key_enc: patch.llm_key_enc ?? null,
          upload_transcripts: patch.upload_transcripts ?? false,
        })
        .onConflict((oc) => oc.column('user_id').doUpdateSet({ ...patch, updated_at: new Date() }))
        .execute();
    },

    /** E-mail addresses of the given users by id (the operator's list of every user's workers). */
    async emails(ids: number[]): Promise<Map<number, string>> {
      if (!ids.length) return new Map();
      const rows = await db.selectFrom('users').select(['id', 'email']).where('id', 'in', ids).execute();
      return new Map(rows.map((r) => [r.id, r.email]));
    },

    // Personal data (privacy export and erasure, retention).

    /** The names a user's rows carry as their author elsewhere: the display name (`name`, else the e-mail) and the e-mail. */
    async actorNames(ex: Executor, userId: number): Promise<string[]> {
      const u = await ex.selectFrom('users').select(['email', 'name']).where('id', '=', userId).executeTakeFirst();
      return u ? [...new Set([u.name || u.email, u.email, `user ${userId}`])] : [];
    },

    /** Lock the user row for the erasure transaction. @returns false when the user does not exist. */
    async lockUser(tx: Transaction<DB>, userId: number): Promise<boolean> {
      return !!(await tx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().executeTakeFirst());
    },

    /** The export's `profile`: the user row without the password hash or version; undefined when missing. */
    exportProfile: (userId: number) =>
      db
        .selectFrom('users')
        .select([
          'id',
          'email',
          'name',
          'role',
          'plan',
          'email_verified',
          'chat_id',
          'heard_source',
          'created_at',
          'updated_at',
        ])
        .where('id', '=', userId)
        .executeTakeFirst(),

    /** The export's `account_settings`: whether a key is stored (never the key), the transcript flag. */
    async exportSettings(userId: number) {
      const s = await db
        .selectFrom('account_settings')
        .select(['llm_key_enc', 'upload_transcripts', 'updated_at'])
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return s
        ? { llm_key_set: !!s.llm_key_enc, upload_transcripts: s.upload_transcripts, updated_at: s.updated_at }
        : { llm_key_set: false, upload_transcripts: false, updated_at: null };
    },

    /** The export's `auth_events`, oldest first, read 500 at a time. */
    exportAuthEvents: (userId: number) =>
      pagedById(db, (ex, after, page) =>
        ex
          .selectFrom('auth_events')
          .select(['id', 'type', 'ip', 'user_agent', 'created_at'])
          .where('user_id', '=', userId)
          .where('id', '>', after)
          .orderBy('id')
          .limit(page)
          .execute(),
      ),

    /**
     * Erase the account, last step of the erasure transaction: its tokens, auth events, settings, signups, the
     * invites it used, its waitlist applications (by e-mail), the e-mail in invite notes, and the user row;
     * invites it created stay without their creator. @returns the erased e-mail (undefined: no such user).
     */
    async eraseUser(tx: Transaction<DB>, userId: number): Promise<string | undefined> {
      const u = await tx.selectFrom('users').select(['email']).where('id', '=', userId).executeTakeFirst();
      await tx.deleteFrom('email_tokens').where('user_id', '=', userId).execute();
      await tx.deleteFrom('auth_events').where('user_id', '=', userId).execute();
      await tx.deleteFrom('account_settings').where('user_id', '=', userId).execute();
      await tx.deleteFrom('signups').where('user_id', '=', userId).execute();
      await tx.deleteFrom('invites').where('used_by', '=', userId).execute();
      await tx.updateTable('invites').set({ created_by: null }).where('created_by', '=', userId).execute();
      if (u) {
        const email = u.email.toLowerCase();
        await tx
          .deleteFrom('beta_waitlist')
          .where(sql`lower(email)`, '=', email)
          .execute();
        await tx
          .updateTable('invites')
          .set({ note: null })
          .where(sql`strpos(lower(note), ${email})`, '>', 0)
          .execute();
      }
      await tx.deleteFrom('users').where('id', '=', userId).execute();
      return u?.email;
    },

    /** Retention: delete auth events older than `before`, in batches. @returns rows deleted. */
    purgeAuthEvents: (before: Date) => purgeOlderThan(db, 'auth_events', 'created_at', before),
  };
}

export type AccountsRepo = ReturnType<typeof createAccountsRepo>;
