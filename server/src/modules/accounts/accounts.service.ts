/**
 * Accounts (docs/api.md, Authentication and tokens): registration with an invite code,
 * login, e-mail verification, password reset and change, the bootstrap admin and admin user management.
 */
import { hash as argonHash, verify as argonVerify } from '@node-rs/argon2';
import type { Static } from 'typebox';
import type { Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { requireAdmin } from '../../access/access.ts';
import type { Actor } from '../../http/auth.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Tokens } from '../../http/tokens.ts';
import type { AuthUserRow, UserCache } from '../../http/auth.ts';
import type { Mailer } from '../../providers/mail/mail.ts';
import type { BreachChecker } from '../../providers/breach/breach.ts';
import { BadRequest, Conflict, Forbidden, NotFound, TooManyRequests, Unauthorized } from '../../http/errors.ts';
import { randomToken, sha256hex } from '../../secrets/crypto.ts';
import { normalizeEmail, normalizeInviteCode, passwordProblem } from './accounts.rules.ts';
import type { AccountsRepo, NewUser } from './accounts.repo.ts';
import type * as S from './accounts.schemas.ts';

/** argon2id parameters: m = 19 MiB, t = 2, p = 1 (OWASP's recommended minimum). */
const ARGON = { algorithm: 2 as const, memoryCost: 19456, timeCost: 2, parallelism: 1 };
/** Signups per client address per 24 h. */
export const SIGNUP_LIMIT = 3;
const VERIFY_TTL_MS = 48 * 3600_000;
const RESET_TTL_MS = 3600_000;

/** The user as `GET /api/auth/me` shows it: `{id, email, name, role, plan, email_verified, chat_id, created_at}`. */
export type PublicUser = Static<typeof S.User>;

/** The user columns read here: those of the auth hook. */
type UserRow = AuthUserRow;

/** A user row (or the caller) as the API shows it; `chat_id` defaults to the id as a string. */
export const toPublicUser = (u: UserRow | Actor): PublicUser => ({
  id: u.id,
  email: u.email,
  name: u.name,
  role: u.role,
  plan: u.plan,
  email_verified: u.email_verified,
  chat_id: u.chat_id ?? String(u.id),
  created_at: u.created_at ?? new Date(0),
});

export interface RequestMeta {
  ip: string;
  userAgent?: string;
}

export interface AccountsDeps {
  repo: AccountsRepo;
  tokens: Tokens;
  mailer: Pick<Mailer, 'send'>;
  breach: BreachChecker;
  appUrl: string;
  /** Told after every committed change of a user's auth columns (before answering: every instance drops the row). */
  userCache?: Pick<UserCache, 'changed'>;
  /** `ADMIN_EMAIL` / `ADMIN_PASSWORD`: made sure of at start. */
  bootstrapAdmin?: { email: string; password: string };
  log: Logger;
}

/** The argon2id hash (PHC string) of a password, with the parameters above. */
export const hashPassword = (pw: string): Promise<string> => argonHash(pw, ARGON);

export function createAccountsService(deps: AccountsDeps) {
  const { repo, tokens, mailer, breach, appUrl } = deps;
  /** After the commit of a change of user `id`'s auth columns, before answering: every instance forgets the row. */
  const changed = async (id: number) => deps.userCache?.changed(id);

  const issueToken = (u: UserRow) =>
    tokens.sign({ sub: u.id, role: u.role, pv: u.password_version, chat_id: u.chat_id ?? String(u.id) });

  /**
   * Reject a new password that breaks the rule or appears in the breach corpus (docs/api.md, Authentication and
   * tokens).
   */
  async function screenNewPassword(pw: string): Promise<void> {
    const problem = passwordProblem(pw);
    if (problem) throw new BadRequest('weak_password', problem);
    if (await breach.isBreached(pw)) {
      throw new BadRequest(
        'breached_password',
        'This password appears in a known data breach; please choose another one.',
      );
    }
  }

  /** 429 `signup_limit` when `ip` already made SIGNUP_LIMIT accounts in the last 24 h (counted in the database). */
  async function checkSignupLimit(ip: string, tx?: Transaction<DB>): Promise<void> {
    if ((await repo.recentSignups(ip, tx)) >= SIGNUP_LIMIT)
      throw new TooManyRequests(
        'signup_limit',
        'Too many accounts were created from this address in the last 24 hours; try again later.',
      );
  }

  async function authEvent(userId: number | null, type: string, meta?: RequestMeta, tx?: Transaction<DB>) {
    await repo.insertAuthEvent(
      { userId, type, ip: meta?.ip ?? null, userAgent: meta?.userAgent?.slice(0, 300) ?? null },
      tx,
    );
  }

  async function sendVerification(user: { id: number; email: string }, tx?: Transaction<DB>) {
    const token = randomToken();
    await repo.insertEmailToken(
      { userId: user.id, kind: 'verify', tokenHash: sha256hex(token), expiresAt: new Date(Date.now() + VERIFY_TTL_MS) },
      tx,
    );
    return async () =>
      mailer.send({
        to: user.email,
        kind: 'verify_email',
        secrets: [token],
        subject: 'Confirm your e-mail address',
        text: `Welcome! Confirm your e-mail address by opening this link within 48 hours:\n\n${appUrl}/verify-email?token=${token}\n\nIf you did not create an account, ignore this message.`,
      });
  }

  /** Create a user row inside `tx`. @throws Conflict('email_taken'). */
  async function insertUser(tx: Transaction<DB>, input: NewUser): Promise<UserRow> {
    const taken = () => new Conflict('email_taken', 'An account with this e-mail already exists.');
    if (await repo.emailTaken(tx, input.email)) throw taken();
    // Two requests (or instances) creating the same e-mail at once: the unique index refuses the second.
    const row = await repo.insertUser(tx, input).catch((err: unknown) => {
      throw (err as { code?: string }).code === '23505' ? taken() : err;
    });
    // chat_id of accounts made here: the user id as a string (it is also a claim of the token).
    await repo.setChatId(tx, row.id, String(row.id));
    return { ...row, chat_id: String(row.id) };
  }

  const service = {
    /**
     * POST /api/auth/register `{email, password, invite_code, name?}` → `{token, user, needs_verification}`.
     * Order: invite present (403 invite_required) → signup limit per address (429 signup_limit) →
     * password rule and breach check (400) → in one transaction: consume the code (403 invalid_invite),
     * create the user (409 email_taken). A failure leaves the code unused.
     */
    async register(input: { email: string; password: string; invite_code?: string; name?: string }, meta: RequestMeta) {
      if (!input.invite_code?.trim()) {
        throw new Forbidden('Registration needs an invite code.', 'invite_required');
      }
      const code = normalizeInviteCode(input.invite_code);
      const email = normalizeEmail(input.email);
      await checkSignupLimit(meta.ip);
      if (!code) throw new Forbidden('This invite code is not valid or was already used.', 'invalid_invite');
      await screenNewPassword(input.password);
      const passwordHash = await hashPassword(input.password);
      let sendMail: (() => Promise<unknown>) | undefined;
      const user = await repo.transaction(async (tx) => {
        await repo.lockSignupAddress(tx, meta.ip);
        await checkSignupLimit(meta.ip, tx);
        if (!(await repo.consumeInvite(tx, code)))
          throw new Forbidden('This invite code is not valid or was already used.', 'invalid_invite');
        const u = await insertUser(tx, { email, passwordHash, name: input.name?.trim() || null });
        await repo.setInviteUser(tx, code, u.id);
        await repo.insertSignup(tx, meta.ip, u.id);
        await authEvent(u.id, 'register', meta, tx);
        sendMail = await sendVerification(u, tx);
        return u;
      });
      await sendMail?.();
      return { token: await issueToken(user), user: toPublicUser(user), needs_verification: !user.email_verified };
    },

    /**
     * Register through the identity provider (docs/api.md, Signing in with the identity provider): the invite rule
     * and the signup limit hold as for `register`; the account has no password, its e-mail is verified when the
     * provider verified it (else the verification e-mail is sent), and the identity is linked in the same
     * transaction. @returns `{token, user, needs_verification}`
     * @throws 403 `invite_required` / `invalid_invite`; 429 `signup_limit`; 409 `email_taken` / `identity_in_use`
     */
    async registerExternal(
      input: {
        email: string;
        name?: string;
        emailVerified: boolean;
        inviteCode?: string;
        identity: { issuer: string; subject: string };
      },
      meta: RequestMeta,
    ) {
      if (!input.inviteCode?.trim())
        throw new Forbidden(
          'No account uses this e-mail yet, and a new account needs an invite code.',
          'invite_required',
        );
      const code = normalizeInviteCode(input.inviteCode);
      const email = normalizeEmail(input.email);
      await checkSignupLimit(meta.ip);
      if (!code) throw new Forbidden('This invite code is not valid or was already used.', 'invalid_invite');
      let sendMail: (() => Promise<unknown>) | undefined;
      const user = await repo.transaction(async (tx) => {
        await repo.lockSignupAddress(tx, meta.ip);
        await checkSignupLimit(meta.ip, tx);
        if (!(await repo.consumeInvite(tx, code)))
          throw new Forbidden('This invite code is not valid or was already used.', 'invalid_invite');
        const u = await insertUser(tx, {
          email,
          passwordHash: null,
          name: input.name?.trim() || null,
          emailVerified: input.emailVerified,
        });
        const linked = await repo.insertIdentity(
          { userId: u.id, issuer: input.identity.issuer, subject: input.identity.subject, email },
          tx,
        );
        if (!linked) throw new Conflict('identity_in_use', 'This identity already signs in to another account.');
        await repo.setInviteUser(tx, code, u.id);
        await repo.insertSignup(tx, meta.ip, u.id);
        await authEvent(u.id, 'register_idp', meta, tx);
        if (!u.email_verified) sendMail = await sendVerification(u, tx);
        return u;
      });
      await sendMail?.();
      return { token: await issueToken(user), user: toPublicUser(user), needs_verification: !user.email_verified };
    },

    /**
     * A session token for user `id`, who proved who they are elsewhere (the identity provider), with an auth event
     * of `type`. @returns `{token, user}`, or undefined when the user no longer exists
     */
    async signInAs(id: number, type: string, meta: RequestMeta) {
      const row = await repo.userById(id);
      if (!row) return undefined;
      await authEvent(row.id, type, meta);
      return { token: await issueToken(row), user: toPublicUser(row) };
    },

    /** POST /api/auth/login → `{token, user, needs_verification}`; 401 `invalid_credentials` for any mismatch. */
    async login(input: { email: string; password: string }, meta: RequestMeta) {
      const email = normalizeEmail(input.email);
      const row = await repo.credentialsByEmail(email);
      // Verify against a fixed hash when the user is unknown, so timing does not tell which e-mails exist.
      dummyHash ??= hashPassword(randomToken());
      // An unknown e-mail costs the same hash verification as a known one (no timing oracle).
      const ok = await argonVerify(row?.password_hash ?? (await dummyHash), input.password)
        .then((v) => !!row && v)
        .catch(() => false);
      if (!row || !ok) {
        if (row) await authEvent(row.id, 'login_failed', meta);
        throw new Unauthorized('The e-mail or password is wrong.', 'invalid_credentials');
      }
      await authEvent(row.id, 'login', meta);
      return { token: await issueToken(row), user: toPublicUser(row), needs_verification: !row.email_verified };
    },

    /**
     * A login of user `id` signed in elsewhere (a CLI device link that user confirmed): an auth event `cli_login`;
     * `issue` makes the credential (the device's access token). @returns `{token, user}`, or undefined when the
     * user no longer exists.
     */
    async loginElsewhere(id: number, meta: RequestMeta, issue: (userId: number) => Promise<string>) {
      const row = await repo.userById(id);
      if (!row) return undefined;
      await authEvent(row.id, 'cli_login', meta);
      return { token: await issue(row.id), user: toPublicUser(row) };
    },

    /**
     * POST /api/auth/verify-email `{token}` → `{ok:true, email_verified:true}`; 400 `invalid_token` when unknown, used
     * or expired.
     */
    async verifyEmail(token: string) {
      const done = await repo.transaction(async (tx) => {
        const userId = await repo.useEmailToken(tx, sha256hex(token), 'verify');
        if (!userId) return false;
        await repo.markEmailVerified(tx, userId);
        return userId;
      });
      if (done) await changed(done);
      if (!done) throw new BadRequest('invalid_token', 'This verification link is not valid or has expired.');
      return { ok: true, email_verified: true };
    },

    /** Send a new verification link to the caller (unverified only). */
    async resendVerification(actor: Actor) {
      if (actor.email_verified) return { ok: true, email_verified: true };
      const send = await sendVerification(actor);
      await send();
      return { ok: true, email_verified: false };
    },

    /**
     * POST /api/auth/forgot-password `{email}` → always `{ok:true}` (never tells whether the e-mail exists).
     * At most 3 reset links per account per hour are sent.
     */
    async forgotPassword(emailInput: string) {
      const email = normalizeEmail(emailInput);
      const user = await repo.userByEmail(email);
      if (!user) return { ok: true };
      if ((await repo.countEmailTokensSince(user.id, 'reset', new Date(Date.now() - 3600_000))) >= 3)
        return { ok: true };
      const token = randomToken();
      await repo.insertEmailToken({
        userId: user.id,
        kind: 'reset',
        tokenHash: sha256hex(token),
        expiresAt: new Date(Date.now() + RESET_TTL_MS),
      });
      await mailer.send({
        to: user.email,
        kind: 'reset_password',
        secrets: [token],
        subject: 'Reset your password',
        text: `Someone asked to reset the password of this account. Open this link within one hour to choose a new one:\n\n${appUrl}/reset-password?token=${token}\n\nIf it was not you, ignore this message; your password stays as it is.`,
      });
      return { ok: true };
    },

    /**
     * POST /api/auth/reset-password `{token, password}` → `{ok:true}`. The new password is screened
     * (400 weak_password / breached_password); 400 `invalid_token` for an unknown, used or expired link.
     * Increments `password_version`, so every earlier token stops working.
     */
    async resetPassword(input: { token: string; password: string }, meta: RequestMeta) {
      const tokenHash = sha256hex(input.token);
      const pending = await repo.validEmailToken(tokenHash, 'reset');
      if (!pending) throw new BadRequest('invalid_token', 'This reset link is not valid or has expired.');
      await screenNewPassword(input.password);
      const passwordHash = await hashPassword(input.password);
      const user = await repo.transaction(async (tx) => {
        const userId = await repo.useEmailToken(tx, tokenHash);
        if (!userId) return undefined;
        const u = await repo.setPassword(tx, userId, passwordHash, { verifyEmail: true });
        if (u) await authEvent(u.id, 'password_reset', meta, tx);
        return u;
      });
      if (!user) throw new BadRequest('invalid_token', 'This reset link is not valid or has expired.');
      await changed(user.id);
      await mailer.send({
        to: user.email,
        kind: 'password_changed',
        subject: 'Your password was changed',
        text: 'The password of your account was just reset. If this was not you, reset it again at once and contact support.',
      });
      return { ok: true };
    },

    /**
     * POST /api/auth/change-password `{current_password, new_password}` → `{ok:true, token}`: increments
     * `password_version` (older tokens then get 401) and returns a fresh token for this client.
     * @throws BadRequest('wrong_password') when the current password does not match.
     */
    async changePassword(actor: Actor, input: { current_password: string; new_password: string }, meta: RequestMeta) {
      const currentHash = await repo.passwordHashOf(actor.id);
      if (currentHash === undefined)
        throw new Unauthorized('The account of this token no longer exists.', 'invalid_token');
      if (currentHash === null)
        throw new BadRequest(
          'no_password',
          'This account has no password yet; set one through the password reset link (POST /api/auth/forgot-password).',
        );
      if (!(await argonVerify(currentHash, input.current_password).catch(() => false))) {
        throw new BadRequest('wrong_password', 'The current password is wrong.');
      }
      await screenNewPassword(input.new_password);
      const passwordHash = await hashPassword(input.new_password);
      const updated = await repo.transaction(async (tx) => {
        const u = await repo.setPassword(tx, actor.id, passwordHash);
        if (!u) throw new Unauthorized('The account of this token no longer exists.', 'invalid_token');
        await authEvent(actor.id, 'password_change', meta, tx);
        return u;
      });
      await changed(actor.id);
      await mailer.send({
        to: updated.email,
        kind: 'password_changed',
        subject: 'Your password was changed',
        text: 'The password of your account was just changed. If this was not you, reset it at once and contact support.',
      });
      return { ok: true, token: await issueToken(updated) };
    },

    /**
     * Make sure the bootstrap admin (`ADMIN_EMAIL` / `ADMIN_PASSWORD`) exists: created at start with role admin and
     * a verified e-mail when no account has the address. An existing account is never promoted: whoever registered
     * that address (with any invite, verified or not) stays what they are, and the start reports it; an existing
     * admin keeps its own password (`ADMIN_PASSWORD` only sets the password of an account it creates, as a
     * password changed through the API must survive a restart).
     * @returns the outcome (`not_promoted`: the address belongs to an account that is not an administrator), and
     *   `passwordDiffers` when an existing admin's password is not `password` (the start step reports it).
     */
    async ensureAdmin(
      emailInput: string,
      password: string,
    ): Promise<{ outcome: 'created' | 'present' | 'not_promoted'; passwordDiffers: boolean }> {
      const email = normalizeEmail(emailInput);
      const row = await repo.credentialsByEmail(email);
      if (row) {
        if (row.role !== 'admin') return { outcome: 'not_promoted', passwordDiffers: false };
        const passwordDiffers =
          row.password_hash === null || !(await argonVerify(row.password_hash, password).catch(() => false));
        return { outcome: 'present', passwordDiffers };
      }
      const passwordHash = await hashPassword(password);
      try {
        await repo.transaction((tx) =>
          insertUser(tx, { email, passwordHash, role: 'admin', emailVerified: true, name: 'Administrator' }),
        );
      } catch (err) {
        // Another instance created it at the same moment, with the same configuration.
        if (err instanceof Conflict) return { outcome: 'present', passwordDiffers: false };
        throw err;
      }
      return { outcome: 'created', passwordDiffers: false };
    },

    /**
     * Start step: make sure the bootstrap admin exists (when configured). When the account already existed
     * with another password, a warning says that `ADMIN_PASSWORD` was not applied and how to change it; when the
     * address belongs to an account that is not an administrator, a warning says it was not promoted.
     */
    async start(): Promise<void> {
      if (!deps.bootstrapAdmin) return;
      const { outcome, passwordDiffers } = await service.ensureAdmin(
        deps.bootstrapAdmin.email,
        deps.bootstrapAdmin.password,
      );
      deps.log.info({ outcome }, 'bootstrap admin checked');
      if (outcome === 'not_promoted')
        deps.log.warn(
          { email: normalizeEmail(deps.bootstrapAdmin.email) },
          'ADMIN_EMAIL names an existing account that is not an administrator; it was not promoted (an address anyone registered never grants privilege). Set ADMIN_EMAIL to an address no account uses to create the administrator',
        );
      if (passwordDiffers)
        deps.log.warn(
          { email: normalizeEmail(deps.bootstrapAdmin.email), outcome },
          'ADMIN_PASSWORD differs from the password of the existing admin account and was not applied: the stored password stays. Log in with it and change it (POST /api/auth/change-password), or reset it by e-mail (POST /api/auth/forgot-password); ADMIN_PASSWORD only sets the password of an account it creates',
        );
    },

    /** `GET /api/auth/me`: the caller as `toPublicUser` shows a user. */
    me: (actor: Actor): PublicUser => toPublicUser(actor),

    /** GET /api/crm/admin/users → `{users, total}` newest first (at most 500). */
    async listUsers(actor: Actor) {
      requireAdmin(actor);
      const rows = await repo.listUsers(500);
      return { users: rows.map(toPublicUser), total: await repo.countUsers() };
    },

    /** POST /api/crm/admin/users → 201 `{user}`: no invite, not counted toward the signup limit. */
    async adminCreateUser(
      actor: Actor,
      input: {
        email: string;
        password: string;
        name?: string;
        role?: 'user' | 'admin';
        plan?: string;
        email_verified?: boolean;
      },
    ) {
      requireAdmin(actor);
      await screenNewPassword(input.password);
      const passwordHash = await hashPassword(input.password);
      const user = await repo.transaction((tx) =>
        insertUser(tx, {
          email: normalizeEmail(input.email),
          passwordHash,
          name: input.name?.trim() || null,
          role: input.role,
          plan: input.plan,
          emailVerified: input.email_verified,
        }),
      );
      return { user: toPublicUser(user) };
    },

    /** POST /api/crm/admin/users/:id/plan `{plan}` → `{ok, plan}`; 404 for an unknown user. */
    async setPlan(actor: Actor, userId: number, plan: string) {
      requireAdmin(actor);
      const stored = await repo.setPlan(userId, plan);
      if (stored === undefined) throw new NotFound('No user has this id.', 'user_not_found');
      await changed(userId);
      return { ok: true, plan: stored };
    },
  };
  return service;
}

export type AccountsService = ReturnType<typeof createAccountsService>;

// A hash of a random string, verified against when the e-mail is unknown.
let dummyHash: Promise<string> | undefined;
