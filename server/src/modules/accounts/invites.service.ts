/**
 * Invite codes and the beta waitlist (docs/api.md, Authentication and tokens).
 */
import { requireAdmin } from '../../access/access.ts';
import type { Actor } from '../../http/auth.ts';
import type { Mailer, OutboxStatus } from '../../providers/mail/mail.ts';
import { Conflict, NotFound } from '../../http/errors.ts';
import { newInviteCode, normalizeEmail, normalizeInviteCode } from './accounts.rules.ts';
import type { AccountsRepo, Executor } from './accounts.repo.ts';

export interface InvitesDeps {
  repo: AccountsRepo;
  /** Sends the approval e-mail; reads the outbox for admins. */
  mailer: Pick<Mailer, 'send' | 'outbox'>;
  appUrl: string;
}

export function createInvitesService(deps: InvitesDeps) {
  const { repo, mailer, appUrl } = deps;

  /** Insert `count` fresh codes (retrying the rare collision), inside `ex` when given. */
  async function generate(
    count: number,
    note: string | null,
    createdBy: number | null,
    ex?: Executor,
  ): Promise<string[]> {
    const codes: string[] = [];
    while (codes.length < count) {
      const code = newInviteCode();
      if (await repo.insertInvite({ code, note, createdBy }, ex)) codes.push(code);
    }
    return codes;
  }

  return {
    /** POST /admin/invites `{count, note?}` → `{ok, codes, count}`. */
    async create(actor: Actor, input: { count?: number; note?: string }) {
      requireAdmin(actor);
      const codes = await generate(input.count ?? 1, input.note?.trim() || null, actor.id);
      return { ok: true, codes, count: codes.length };
    },

    /** GET /admin/invites → every code, newest first, with `total_active` and `total_used`. */
    async list(actor: Actor) {
      requireAdmin(actor);
      const rows = await repo.listInvites();
      const invites = rows.map((r) => ({ ...r, status: r.used_at ? ('used' as const) : ('active' as const) }));
      return {
        invites,
        total_active: invites.filter((i) => i.status === 'active').length,
        total_used: invites.filter((i) => i.status === 'used').length,
      };
    },

    /** DELETE /admin/invites/:code → `{ok:true}`; 404 unknown code, 409 `invite_used` for a used one. */
    async revoke(actor: Actor, codeInput: string) {
      requireAdmin(actor);
      const code = normalizeInviteCode(codeInput);
      if (!code) throw new NotFound('No invite has this code.', 'invite_not_found');
      if (await repo.deleteUnusedInvite(code)) return { ok: true, code };
      if (await repo.inviteExists(code))
        throw new Conflict('invite_used', 'This code was already used and cannot be revoked.');
      throw new NotFound('No invite has this code.', 'invite_not_found');
    },

    /**
     * POST /api/auth/waitlist `{email, message?}` → `{ok:true}`; a second open application of one e-mail changes
     * nothing.
     */
    async apply(input: { email: string; message?: string }) {
      await repo.insertWaitlistEntry(normalizeEmail(input.email), input.message?.trim() || null);
      return { ok: true };
    },

    /** GET /admin/waitlist → `{entries:[{id,email,message,status,created_at}]}` newest first. */
    async listWaitlist(actor: Actor) {
      requireAdmin(actor);
      return { entries: await repo.listWaitlist(1000) };
    },

    /**
     * POST /admin/waitlist/:id/approve → `{ok, invite_code, email_sent}`: generates a code, marks the
     * application approved and e-mails the code (`email_sent` is true when an SMTP server took it).
     * 404 unknown id; 409 `already_decided` when not open.
     */
    async approve(actor: Actor, id: number) {
      requireAdmin(actor);
      const result = await repo.transaction(async (tx) => {
        const entry = await repo.waitlistEntryForUpdate(tx, id);
        if (!entry) throw new NotFound('No waitlist application has this id.', 'waitlist_entry_not_found');
        if (entry.status !== 'open')
          throw new Conflict('already_decided', `This application was already ${entry.status}.`);
        const [code] = await generate(1, `waitlist #${entry.id} ${entry.email}`, actor.id, tx);
        await repo.approveWaitlistEntry(tx, id, code);
        return { email: entry.email, code };
      });
      const sent = await mailer.send({
        to: result.email,
        kind: 'invite',
        secrets: [result.code, encodeURIComponent(result.code)],
        subject: 'Your invite to the CRM service',
        text: `Your application was approved. Your invite code is ${result.code}.\n\nCreate your account here: ${appUrl}/register?invite=${encodeURIComponent(result.code)}`,
      });
      return { ok: true, invite_code: result.code, email_sent: sent.sent };
    },

    /** POST /admin/waitlist/:id/reject → `{ok:true}`; 404 unknown id; 409 when not open. */
    async reject(actor: Actor, id: number) {
      requireAdmin(actor);
      if (await repo.rejectOpenWaitlistEntry(id)) return { ok: true };
      const status = await repo.waitlistStatus(id);
      if (!status) throw new NotFound('No waitlist application has this id.', 'waitlist_entry_not_found');
      throw new Conflict('already_decided', `This application was already ${status}.`);
    },

    /**
     * GET /admin/outbox → `{items, total}`: the newest `limit` e-mails (of `status` when given: `failed` lists the
     * deliveries that gave up, `retrying` those waiting for another attempt) with their transport, attempts and
     * last error, and how many there are. Kept mail is read here when no transport is configured.
     */
    async outbox(actor: Actor, limit: number, status?: OutboxStatus) {
      requireAdmin(actor);
      return mailer.outbox(limit, status);
    },
  };
}
export type InvitesService = ReturnType<typeof createInvitesService>;
