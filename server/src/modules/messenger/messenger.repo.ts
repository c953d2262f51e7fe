/**
 * The messenger area's SQL: poller leases and offsets (`messenger_pollers`), handled updates
 * (`messenger_updates`), replies owed to a chat (`messenger_replies`), one-time link codes
 * (`messenger_link_codes`) and the messages approval requests were sent as (`messenger_approval_notices`).
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';

type Executor = Kysely<DB> | Transaction<DB>;

/** The update was already handled (by this or another instance): roll back and skip it. */
export class UpdateAlreadyHandled extends Error {
  constructor() {
    super('update already handled');
  }
}

export function createMessengerRepo(db: Kysely<DB>) {
  return {
    transaction: <T>(fn: (tx: Transaction<DB>) => Promise<T>): Promise<T> => db.transaction().execute(fn),

    /**
     * Take (or keep) the lease of bot `botId` for `owner` until now + `leaseMs`: granted when nobody holds it,
     * the holder is `owner`, or the lease expired. The row is created on first use.
     * @returns the stored offset when granted, undefined when another live instance holds it.
     */
    async acquire(botId: string, workerId: number, owner: string, leaseMs: number): Promise<number | undefined> {
      const r = await sql<{ update_offset: number }>`
        insert into messenger_pollers (bot_id, worker_id, lease_owner, lease_expires_at, polling_since)
        values (${botId}, ${workerId}, ${owner}, now() + ${leaseMs} * interval '1 millisecond', now())
        on conflict (bot_id) do update
          set worker_id = excluded.worker_id, lease_owner = excluded.lease_owner,
              lease_expires_at = excluded.lease_expires_at,
              polling_since = case when messenger_pollers.lease_owner = excluded.lease_owner
                                   then messenger_pollers.polling_since else now() end,
              updated_at = now()
          where messenger_pollers.lease_owner is null
             or messenger_pollers.lease_owner = excluded.lease_owner
             or messenger_pollers.lease_expires_at < now()
        returning update_offset`.execute(db);
      return r.rows[0] ? Number(r.rows[0].update_offset) : undefined;
    },

    /** Extend the leases `owner` still holds among `botIds`. @returns the bot ids whose lease was extended. */
    async renew(botIds: string[], owner: string, leaseMs: number): Promise<string[]> {
      if (!botIds.length) return [];
      const rows = await db
        .updateTable('messenger_pollers')
        .set({ lease_expires_at: sql`now() + ${leaseMs} * interval '1 millisecond'`, updated_at: new Date() })
        .where('bot_id', 'in', botIds)
        .where('lease_owner', '=', owner)
        .returning('bot_id')
        .execute();
      return rows.map((r) => r.bot_id);
    },

    /** Give up the lease of `botId` if `owner` holds it. */
    async release(botId: string, owner: string): Promise<void> {
      await db
        .updateTable('messenger_pollers')
        .set({ lease_owner: null, lease_expires_at: null, polling_since: null, updated_at: new Date() })
        .where('bot_id', '=', botId)
        .where('lease_owner', '=', owner)
        .execute();
    },

    /** Give up every lease held by one of `owners` (instances found dead). @returns how many were freed. */
    async releaseOwners(owners: string[]): Promise<number> {
      if (!owners.length) return 0;
      const r = await db
        .updateTable('messenger_pollers')
        .set({ lease_owner: null, lease_expires_at: null, polling_since: null, updated_at: new Date() })
        .where('lease_owner', 'in', owners)
        .executeTakeFirst();
      return Number(r.numUpdatedRows);
    },

    /** Whether some instance polls bot `botId` now (a lease that has not expired). */
    async polling(botId: string): Promise<boolean> {
      const r = await db
        .selectFrom('messenger_pollers')
        .select('bot_id')
        .where('bot_id', '=', botId)
        .where('lease_owner', 'is not', null)
        .where('lease_expires_at', '>', sql<Date>`now()`)
        .executeTakeFirst();
      return !!r;
    },

    /** The stored `getUpdates` offset of bot `botId` (0 before its first update). */
    async offset(botId: string): Promise<number> {
      const r = await db
        .selectFrom('messenger_pollers')
        .select('update_offset')
        .where('bot_id', '=', botId)
        .executeTakeFirst();
      return r ? Number(r.update_offset) : 0;
    },

    /**
     * Record update `updateId` of bot `botId` as handled and move the offset past it, in `tx`.
     * @throws UpdateAlreadyHandled when it was recorded before (the caller's transaction rolls back).
     */
    async claimUpdate(
      tx: Transaction<DB>,
      u: { botId: string; updateId: number; workerId: number; chatId: string | null; kind: string; runId?: number },
    ): Promise<void> {
      const r = await tx
        .insertInto('messenger_updates')
        .values({
          bot_id: u.botId,
          update_id: u.updateId,
          worker_id: u.workerId,
          chat_id: u.chatId,
          kind: u.kind,
          run_id: u.runId ?? null,
        })
        .onConflict((oc) => oc.columns(['bot_id', 'update_id']).doNothing())
        .returning('update_id')
        .executeTakeFirst();
      if (!r) throw new UpdateAlreadyHandled();
      await tx
        .updateTable('messenger_pollers')
        .set({ update_offset: sql`greatest(update_offset, ${u.updateId + 1})` })
        .where('bot_id', '=', u.botId)
        .execute();
    },

    /** A reply owed to `chatId` when run `runId` ends, in `tx` (the transaction that queued the run). */
    async addReply(
      tx: Transaction<DB>,
      r: { runId: number; projectId: number; workerId: number; chatId: string },
    ): Promise<void> {
      await tx
        .insertInto('messenger_replies')
        .values({ run_id: r.runId, project_id: r.projectId, worker_id: r.workerId, chat_id: r.chatId })
        .execute();
    },

    /** Replies not sent yet, oldest first (at most `limit`). */
    pendingReplies: (limit: number) =>
      db
        .selectFrom('messenger_replies')
        .select(['run_id', 'project_id', 'worker_id', 'chat_id'])
        .where('sent_at', 'is', null)
        .orderBy('created_at')
        .limit(limit)
        .execute(),

    /** The pending reply of run `runId`. */
    pendingReply: (runId: number) =>
      db
        .selectFrom('messenger_replies')
        .select(['run_id', 'project_id', 'worker_id', 'chat_id'])
        .where('run_id', '=', runId)
        .where('sent_at', 'is', null)
        .executeTakeFirst(),

    /** Take the reply of run `runId` to send it: true for exactly one caller. */
    async claimReply(runId: number): Promise<boolean> {
      const r = await db
        .updateTable('messenger_replies')
        .set({ sent_at: new Date() })
        .where('run_id', '=', runId)
        .where('sent_at', 'is', null)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },

    /** The message approval `approvalId`'s request was sent as, or undefined. */
    notice: (approvalId: number) =>
      db
        .selectFrom('messenger_approval_notices')
        .select(['approval_id', 'project_id', 'bot_id', 'chat_id', 'message_id', 'text', 'edited_at'])
        .where('approval_id', '=', approvalId)
        .executeTakeFirst()
        .then((r) => (r ? { ...r, message_id: Number(r.message_id) } : undefined)),

    /** The approval whose request is message `messageId` of chat `chatId` through bot `botId`, or undefined. */
    noticeByMessage: (botId: string, chatId: string, messageId: number) =>
      db
        .selectFrom('messenger_approval_notices')
        .select(['approval_id', 'project_id', 'bot_id', 'chat_id', 'message_id', 'text', 'edited_at'])
        .where('bot_id', '=', botId)
        .where('chat_id', '=', chatId)
        .where('message_id', '=', messageId)
        .executeTakeFirst()
        .then((r) => (r ? { ...r, message_id: Number(r.message_id) } : undefined)),

    /** Record the message approval `approvalId`'s request was sent as (once; a second record is ignored). */
    async addNotice(n: {
      approvalId: number;
      projectId: number;
      botId: string;
      chatId: string;
      messageId: number;
      text: string;
    }): Promise<void> {
      await db
        .insertInto('messenger_approval_notices')
        .values({
          approval_id: n.approvalId,
          project_id: n.projectId,
          bot_id: n.botId,
          chat_id: n.chatId,
          message_id: n.messageId,
          text: n.text,
        })
        .onConflict((oc) => oc.column('approval_id').doNothing())
        .execute();
    },

    /** Mark the notice of approval `approvalId` edited: true for exactly one caller. */
    async claimNoticeEdit(approvalId: number): Promise<boolean> {
      const r = await db
        .updateTable('messenger_approval_notices')
        .set({ edited_at: new Date() })
        .where('approval_id', '=', approvalId)
        .where('edited_at', 'is', null)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },

    /** Replace the caller's link codes by one (its sha256), valid until `expiresAt`. */
    async newLinkCode(userId: number, codeHash: string, expiresAt: Date): Promise<void> {
      await db.transaction().execute(async (tx) => {
        await tx.deleteFrom('messenger_link_codes').where('user_id', '=', userId).execute();
        await tx
          .insertInto('messenger_link_codes')
          .values({ code_hash: codeHash, user_id: userId, expires_at: expiresAt })
          .execute();
      });
    },

    /** Use the link code of hash `codeHash` once, in `tx`. @returns its user, or undefined (unknown, used, expired). */
    async useLinkCode(tx: Transaction<DB>, codeHash: string): Promise<number | undefined> {
      const r = await tx
        .updateTable('messenger_link_codes')
        .set({ used_at: new Date() })
        .where('code_hash', '=', codeHash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', sql<Date>`now()`)
        .returning('user_id')
        .executeTakeFirst();
      return r?.user_id;
    },

    /** Forget handled updates and sent replies older than `days`, and expired link codes. */
    async prune(days: number, ex: Executor = db): Promise<void> {
      const before = sql<Date>`now() - ${days} * interval '1 day'`;
      await ex.deleteFrom('messenger_updates').where('created_at', '<', before).execute();
      await ex.deleteFrom('messenger_replies').where('sent_at', '<', before).execute();
      await ex
        .deleteFrom('messenger_link_codes')
        .where('expires_at', '<', sql<Date>`now()`)
        .execute();
    },

    /** The user's link codes, deleted at erasure. */
    async eraseUser(tx: Transaction<DB>, userId: number): Promise<void> {
      await tx.deleteFrom('messenger_link_codes').where('user_id', '=', userId).execute();
    },

    /**
     * A project's replies and approval notices, deleted at erasure (its workers' pollers and handled updates go with the workers,
     * by their foreign keys).
     */
    async eraseProject(tx: Transaction<DB>, projectId: number): Promise<void> {
      await tx.deleteFrom('messenger_replies').where('project_id', '=', projectId).execute();
      await tx.deleteFrom('messenger_approval_notices').where('project_id', '=', projectId).execute();
    },

    /** A project's messenger replies, for the export: `{run_id, worker_id, chat_id, created_at, sent_at}`. */
    exportProject: (projectId: number) =>
      db
        .selectFrom('messenger_replies')
        .select(['run_id', 'worker_id', 'chat_id', 'created_at', 'sent_at'])
        .where('project_id', '=', projectId)
        .orderBy('created_at')
        .execute(),
  };
}
export type MessengerRepo = ReturnType<typeof createMessengerRepo>;
