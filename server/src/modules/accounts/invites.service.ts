/**
 * Invite codes and the beta waitlist (specification: Admin: invites and waitlist; Beta waitlist
 * application states open → approved | rejected; CONTRACT.md §1 `POST /api/auth/waitlist`).
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { requireAdmin } from '../../access/access.ts';
import type { Actor } from '../../http/auth.ts';
import type { Mailer } from '../../providers/mail/mail.ts';
import { Conflict, NotFound } from '../../http/errors.ts';
import { newInviteCode, normalizeEmail, normalizeInviteCode } from './accounts.fns.ts';

export function createInvitesService(deps: { db: Kysely<DB>; mailer: Mailer; appUrl: string }) {
  const { db, mailer, appUrl } = deps;

  /** Insert `count` fresh codes (retrying the rare collision). */
  async function generate(
    count: number,
    note: string | null,
    createdBy: number | null,
    tx: Kysely<DB> = db,
  ): Promise<string[]> {
    const codes: string[] = [];
    while (codes.length < count) {
      const code = newInviteCode();
      const res = await tx
        .insertInto('invites')
        .values({ code, note, created_by: createdBy })
        .onConflict((oc) => oc.column('code').doNothing())
        .returning('code')
        .executeTakeFirst();
      if (res) codes.push(res.code);
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
      const rows = await db
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
        .execute();
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
      const del = await db
        .deleteFrom('invites')
        .where('code', '=', code)
        .where('used_at', 'is', null)
        .returning('code')
        .executeTakeFirst();
      if (del) return { ok: true, code };
      const exists = await db.selectFrom('invites').select('code').where('code', '=', code).executeTakeFirst();
      if (exists) throw new Conflict('invite_used', 'This code was already used and cannot be revoked.');
      throw new NotFound('No invite has this code.', 'invite_not_found');
    },

    /** POST /api/auth/waitlist `{email, message?}` → `{ok:true}`; a second open application of one e-mail changes nothing. */
    async apply(input: { email: string; message?: string }) {
      await db
        .insertInto('beta_waitlist')
        .values({ email: normalizeEmail(input.email), message: input.message?.trim() || null })
        .onConflict((oc) => oc.column('email').where('status', '=', 'open').doNothing())
        .execute();
      return { ok: true };
    },

    /** GET /admin/waitlist → `{entries:[{id,email,message,status,created_at}]}` newest first. */
    async listWaitlist(actor: Actor) {
      requireAdmin(actor);
      const entries = await db
        .selectFrom('beta_waitlist')
        .select(['id', 'email', 'message', 'status', 'created_at'])
        .orderBy('id', 'desc')
        .limit(1000)
        .execute();
      return { entries };
    },

    /**
     * POST /admin/waitlist/:id/approve → `{ok, invite_code, email_sent}`: generates a code, marks the
     * application approved and e-mails the code (`email_sent` is true when an SMTP server took it).
     * 404 unknown id; 409 `already_decided` when not open.
     */
    async approve(actor: Actor, id: number) {
      requireAdmin(actor);
      const result = await db.transaction().execute(async (tx) => {
        const entry = await tx
          .selectFrom('beta_waitlist')
          .select(['id', 'email', 'status'])
          .where('id', '=', id)
          .forUpdate()
          .executeTakeFirst();
        if (!entry) throw new NotFound('No waitlist application has this id.', 'waitlist_entry_not_found');
        if (entry.status !== 'open')
          throw new Conflict('already_decided', `This application was already ${entry.status}.`);
        const [code] = await generate(1, `waitlist #${entry.id} ${entry.email}`, actor.id, tx);
        await tx
          .updateTable('beta_waitlist')
          .set({ status: 'approved', invite_code: code, decided_at: new Date() })
          .where('id', '=', id)
          .execute();
        return { email: entry.email, code };
      });
      const sent = await mailer.send({
        to: result.email,
        kind: 'invite',
        subject: 'Your invite to the CRM service',
        text: `Your application was approved. Your invite code is ${result.code}.\n\nCreate your account here: ${appUrl}/register?invite=${encodeURIComponent(result.code)}`,
      });
      return { ok: true, invite_code: result.code, email_sent: sent.sent };
    },

    /** POST /admin/waitlist/:id/reject → `{ok:true}`; 404 unknown id; 409 when not open. */
    async reject(actor: Actor, id: number) {
      requireAdmin(actor);
      const res = await db
        .updateTable('beta_waitlist')
        .set({ status: 'rejected', decided_at: new Date() })
        .where('id', '=', id)
        .where('status', '=', 'open')
        .returning('id')
        .executeTakeFirst();
      if (res) return { ok: true };
      const entry = await db.selectFrom('beta_waitlist').select('status').where('id', '=', id).executeTakeFirst();
      if (!entry) throw new NotFound('No waitlist application has this id.', 'waitlist_entry_not_found');
      throw new Conflict('already_decided', `This application was already ${entry.status}.`);
    },

    /** GET /admin/outbox: e-mails kept or sent, newest first (read kept mail when no SMTP server is configured). */
    async outbox(actor: Actor, limit: number) {
      requireAdmin(actor);
      const items = await db
        .selectFrom('outbox')
        .select(['id', 'to_addr as to', 'subject', 'text_body as text', 'kind', 'status', 'created_at'])
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
      const total = await db.selectFrom('outbox').select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow();
      return { items, total: total.n };
    },
  };
}
export type InvitesService = ReturnType<typeof createInvitesService>;
