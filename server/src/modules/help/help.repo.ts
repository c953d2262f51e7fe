/**
 * SQL of the help assistant: `help_messages` (the callers' question and answer history) and `help_usage`
 * (messages per user per UTC day, for the daily cap).
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { pagedById } from '../../db/privacy-sql.ts';

/** The current UTC day, by the database clock. */
const today = sql<string>`(now() at time zone 'utc')::date`;

export function createHelpRepo(db: Kysely<DB>) {
  return {
    /** Messages a user counted today (UTC day); 0 when none. */
    async usedToday(userId: number): Promise<number> {
      const row = await db
        .selectFrom('help_usage')
        .select('used')
        .where('user_id', '=', userId)
        .where('day', '=', today)
        .executeTakeFirst();
      return row?.used ?? 0;
    },

    /**
     * Count one message of today unless the user already has `limit` (one atomic statement, so concurrent
     * messages cannot pass the cap). @returns messages counted today including this one, or null at the cap.
     */
    async consume(userId: number, limit: number): Promise<number | null> {
      const r = await sql<{ used: number }>`
        insert into help_usage (user_id, day, used) values (${userId}, ${today}, 1)
        on conflict (user_id, day) do update set used = help_usage.used + 1 where help_usage.used < ${limit}
        returning used`.execute(db);
      return r.rows[0]?.used ?? null;
    },

    /** Give back one message of today (the answer failed); never below 0. */
    async refund(userId: number): Promise<void> {
      await sql`update help_usage set used = greatest(used - 1, 0) where user_id = ${userId} and day = ${today}`.execute(
        db,
      );
    },

    /** Keep a question and its reply (with the reply's sources) in the user's history. */
    async insertExchange(userId: number, question: string, reply: string, sources: string[]): Promise<void> {
      await db
        .insertInto('help_messages')
        .values([
          { user_id: userId, role: 'user', text: question, sources: '[]' },
          { user_id: userId, role: 'assistant', text: reply, sources: JSON.stringify(sources) },
        ])
        .execute();
    },

    /** A user's newest `limit` messages, newest first. */
    history: (userId: number, limit: number) =>
      db
        .selectFrom('help_messages')
        .select(['id', 'role', 'text', 'sources', 'created_at'])
        .where('user_id', '=', userId)
        .orderBy('id', 'desc')
        .limit(limit)
        .execute(),

    /** Delete a user's messages (the daily count stays). */
    async deleteHistory(userId: number): Promise<void> {
      await db.deleteFrom('help_messages').where('user_id', '=', userId).execute();
    },

    // Personal data (privacy export and erasure, retention).

    /** The export's `arc_help_history`: the user's help messages, oldest first, 500 at a time. */
    exportUser: (userId: number) =>
      pagedById(db, (ex, after, page) =>
        ex
          .selectFrom('help_messages')
          .select(['id', 'role', 'text', 'sources', 'created_at'])
          .where('user_id', '=', userId)
          .where('id', '>', after)
          .orderBy('id')
          .limit(page)
          .execute(),
      ),

    /** Erasure: the user's help messages and daily counters. */
    async eraseUser(tx: Transaction<DB>, userId: number): Promise<void> {
      await tx.deleteFrom('help_messages').where('user_id', '=', userId).execute();
      await tx.deleteFrom('help_usage').where('user_id', '=', userId).execute();
    },
  };
}

export type HelpRepo = ReturnType<typeof createHelpRepo>;
