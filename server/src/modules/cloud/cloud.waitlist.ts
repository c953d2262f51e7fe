/**
 * The cloud waitlist (docs/api.md, Cloud container): users join it, see their position, and administrators list it
 * and invite from it (the invite sets the cloud plan).
 */
import type { Actor } from '../../http/auth.ts';
import { requireAdmin } from '../../access/access.ts';
import { Conflict } from '../../http/errors.ts';
import { includesCloud } from '../usage/usage.rules.ts';
import type { AccountsRepo } from '../accounts/accounts.repo.ts';
import type { AccountsService } from '../accounts/accounts.service.ts';
import type { CloudRepo, WaitlistEntry } from './cloud.repo.ts';

/** The waitlist's methods of the cloud service. */
export function createCloudWaitlist(deps: {
  repo: CloudRepo;
  /** The invite upgrades the plan (admin only). */
  accounts: Pick<AccountsService, 'setPlan'>;
  /** E-mail addresses of waitlist entries (admin list). */
  emails: Pick<AccountsRepo, 'emails'>;
}) {
  const { repo } = deps;
  return {
    /**
     * POST /cloud/waitlist → `{position, status, joined_at, message}`; idempotent.
     * @throws Conflict 409 `already_on_cloud` (cloud plan) or `container_exists`.
     */
    async joinWaitlist(actor: Actor, body: { note?: string } = {}) {
      if (includesCloud(actor)) throw new Conflict('already_on_cloud', 'You already have the cloud plan.');
      const row = await repo.container(actor.id);
      if (row && row.status !== 'deleted')
        throw new Conflict('container_exists', 'You already have a cloud container.');
      await repo.joinWaitlist(actor.id, body.note ?? null);
      const e = (await repo.waitlistEntry(actor.id))!;
      return {
        position: e.position,
        status: e.status,
        joined_at: e.joined_at,
        message: `You are number ${e.position} on the cloud waitlist.`,
      };
    },

    /** GET /cloud/waitlist/status → `{position, status, joined_at, invited_at}` or `{status:'not_joined'}`. */
    async waitlistStatus(actor: Actor) {
      const e = await repo.waitlistEntry(actor.id);
      if (!e) return { status: 'not_joined' as const };
      return { position: e.position, status: e.status, joined_at: e.joined_at, invited_at: e.invited_at };
    },

    /** GET /cloud/waitlist (admin) → `{stats:{total, waiting, invited, activated}, list}` in order of joining. */
    async listWaitlist(actor: Actor, limit = 500) {
      requireAdmin(actor);
      const [stats, list] = await Promise.all([repo.waitlistStats(), repo.listWaitlist(limit)]);
      const emails = await deps.emails.emails(list.map((e) => e.user_id));
      return { stats, list: list.map((e: WaitlistEntry) => ({ ...e, email: emails.get(e.user_id) ?? '' })) };
    },

    /**
     * POST /cloud/waitlist/invite (admin) `{user_id}` → `{ok, user_id, position}`: the entry becomes invited
     * (one is made when the user had none) and the plan cloud. @throws NotFound `user_not_found`.
     */
    async invite(actor: Actor, userId: number) {
      requireAdmin(actor);
      await deps.accounts.setPlan(actor, userId, 'cloud');
      await repo.inviteFromWaitlist(userId);
      const e = await repo.waitlistEntry(userId);
      return { ok: true, user_id: userId, position: e?.position ?? null };
    },
  };
}
