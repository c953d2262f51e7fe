/**
 * SQL of the privacy area: `export_history` (one row per data export: the limit of 3 per 24 hours and the
 * export's own `export_history` section) and `retention_runs` (one row per UTC day: the daily purge is
 * claimed once across instances and records what it deleted).
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { purgeOlderThan } from '../../db/privacy-sql.ts';

export function createPrivacyRepo(db: Kysely<DB>) {
  return {
    /** Run `fn` in one transaction; pass `tx` to every call inside it. */
    transaction: <T>(fn: (tx: Transaction<DB>) => Promise<T>): Promise<T> => db.transaction().execute(fn),

    /**
     * Record an export unless the user already made `max` since `since` (serialized per user by an advisory
     * lock, so parallel requests cannot both pass). @returns `{ok:false, oldest}` when refused.
     */
    async claimExport(userId: number, max: number, since: Date): Promise<{ ok: boolean; oldest?: Date }> {
      return db.transaction().execute(async (tx) => {
        await sql`select pg_advisory_xact_lock(hashtext('privacy.export'), ${userId}::int)`.execute(tx);
        const r = await tx
          .selectFrom('export_history')
          .select([sql<number>`count(*)::int`.as('n'), sql<Date | null>`min(created_at)`.as('oldest')])
          .where('user_id', '=', userId)
          .where('created_at', '>', since)
          .executeTakeFirstOrThrow();
        if (Number(r.n) >= max) return { ok: false, oldest: r.oldest ? new Date(r.oldest) : undefined };
        await tx.insertInto('export_history').values({ user_id: userId }).execute();
        return { ok: true };
      });
    },

    /** The export's `export_history`: the user's exports, oldest first. */
    exportHistory: (userId: number) =>
      db
        .selectFrom('export_history')
        .select(['id', 'created_at'])
        .where('user_id', '=', userId)
        .orderBy('id')
        .execute(),

    /** Erasure: the user's export history. */
    async eraseUser(tx: Transaction<DB>, userId: number): Promise<void> {
      await tx.deleteFrom('export_history').where('user_id', '=', userId).execute();
    },

    /** Retention: delete export records older than `before`, in batches. @returns rows deleted. */
    purge: (before: Date) => purgeOlderThan(db, 'export_history', 'created_at', before),

    /** Claim the purge of a UTC day (`YYYY-MM-DD`). @returns true for the one caller that claimed it. */
    async claimRetentionDay(tx: Transaction<DB>, day: string): Promise<boolean> {
      const r = await tx
        .insertInto('retention_runs')
        .values({ day })
        .onConflict((oc) => oc.column('day').doNothing())
        .returning('day')
        .executeTakeFirst();
      return !!r;
    },

    /** Record what the purge of `day` deleted, by table. */
    async finishRetention(day: string, deleted: Record<string, number>): Promise<void> {
      await db
        .updateTable('retention_runs')
        .set({ finished_at: new Date(), deleted: JSON.stringify(deleted) })
        .where('day', '=', day)
        .execute();
    },

    /** The latest purges, newest first. */
    retentionRuns: (limit: number) =>
      db
        .selectFrom('retention_runs')
        .select(['day', 'started_at', 'finished_at', 'deleted'])
        .orderBy('day', 'desc')
        .limit(limit)
        .execute(),
  };
}

export type PrivacyRepo = ReturnType<typeof createPrivacyRepo>;
