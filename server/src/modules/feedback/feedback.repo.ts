/**
 * SQL of the feedback area: `feedback_reports` (bug, feature and other reports) and `translation_feedback`
 * (suggested translations of the UI's and the service's texts, reviewed by admins).
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';

export type Executor = Kysely<DB> | Transaction<DB>;
export type TranslationStatus = 'open' | 'accepted' | 'rejected';

/** Namespace of the per-locale catalog lock (`pg_advisory_xact_lock(int, int)`). */
const CATALOG_LOCK = 30_014;

const TRANSLATION_COLS = [
  'id',
  'locale',
  'msgid',
  'suggestion',
  'severity',
  'current_translation',
  'page_url',
  'status',
  'note',
  'reviewed_by',
  'reviewed_at',
  'created_at',
] as const;

export function createFeedbackRepo(db: Kysely<DB>) {
  return {
    /** Run `fn` in one transaction; pass `tx` to every call inside it. */
    transaction: <T>(fn: (tx: Transaction<DB>) => Promise<T>): Promise<T> => db.transaction().execute(fn),

    async insertReport(r: {
      userId: number;
      type: 'bug' | 'feature' | 'other';
      title: string;
      description: string;
      project: string | null;
      browser: string | null;
    }): Promise<number> {
      const row = await db
        .insertInto('feedback_reports')
        .values({
          user_id: r.userId,
          type: r.type,
          title: r.title,
          description: r.description,
          project: r.project,
          browser: r.browser,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return Number(row.id);
    },

    /** The newest `limit` reports, newest first. */
    listReports: (limit: number) =>
      db
        .selectFrom('feedback_reports')
        .select(['id', 'user_id', 'type', 'title', 'description', 'project', 'browser', 'created_at'])
        .orderBy('id', 'desc')
        .limit(limit)
        .execute(),

    async insertTranslation(t: {
      userId: number;
      locale: string;
      msgid: string;
      suggestion: string;
      severity: 'minor' | 'major' | 'wrong';
      currentTranslation: string | null;
      pageUrl: string | null;
    }): Promise<number> {
      const row = await db
        .insertInto('translation_feedback')
        .values({
          user_id: t.userId,
          locale: t.locale,
          msgid: t.msgid,
          suggestion: t.suggestion,
          severity: t.severity,
          current_translation: t.currentTranslation,
          page_url: t.pageUrl,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return Number(row.id);
    },

    /** Suggestions, newest first, filtered by locale and status. */
    listTranslations(q: { locale?: string; status?: TranslationStatus; limit: number }) {
      let s = db.selectFrom('translation_feedback').select(TRANSLATION_COLS).orderBy('id', 'desc').limit(q.limit);
      if (q.locale) s = s.where('locale', '=', q.locale);
      if (q.status) s = s.where('status', '=', q.status);
      return s.execute();
    },

    /** Per locale: total, open, accepted, rejected and open ones of severity `wrong` (critical). */
    async translationStats() {
      const rows = await db
        .selectFrom('translation_feedback')
        .select([
          'locale',
          sql<number>`count(*)::int`.as('total'),
          sql<number>`(count(*) filter (where status = 'open'))::int`.as('open_count'),
          sql<number>`(count(*) filter (where status = 'accepted'))::int`.as('accepted'),
          sql<number>`(count(*) filter (where status = 'rejected'))::int`.as('rejected'),
          sql<number>`(count(*) filter (where status = 'open' and severity = 'wrong'))::int`.as('critical_open'),
        ])
        .groupBy('locale')
        .orderBy('locale')
        .execute();
      return rows;
    },

    /** Serialize changes of one locale's catalogs for the rest of the transaction (across instances). */
    async lockCatalog(tx: Transaction<DB>, locale: string): Promise<void> {
      await sql`select pg_advisory_xact_lock(${CATALOG_LOCK}::int, hashtext(${locale}))`.execute(tx);
    },

    /**
     * Move an open suggestion to `status` (one statement: of two reviews at once, one wins).
     * @returns the suggestion, or undefined when it does not exist or is not open.
     */
    review: (id: number, status: 'accepted' | 'rejected', note: string | null, by: string, ex: Executor = db) =>
      ex
        .updateTable('translation_feedback')
        .set({ status, note, reviewed_by: by, reviewed_at: new Date() })
        .where('id', '=', id)
        .where('status', '=', 'open')
        .returning(['id', 'locale', 'msgid', 'suggestion'])
        .executeTakeFirst(),

    /** The status of a suggestion, or undefined. */
    async translationStatus(id: number, ex: Executor = db): Promise<TranslationStatus | undefined> {
      const r = await ex.selectFrom('translation_feedback').select('status').where('id', '=', id).executeTakeFirst();
      return r?.status;
    },

    /** Accepted suggestions for one msgid (any locale). */
    async acceptedFor(ex: Executor, msgid: string): Promise<number> {
      const r = await ex
        .selectFrom('translation_feedback')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('msgid', '=', msgid)
        .where('status', '=', 'accepted')
        .executeTakeFirstOrThrow();
      return r.n;
    },

    /** A user's reports and suggestions (privacy export). */
    async ofUser(userId: number) {
      const reports = await db
        .selectFrom('feedback_reports')
        .select(['type', 'title', 'description', 'project', 'browser', 'created_at'])
        .where('user_id', '=', userId)
        .orderBy('id')
        .execute();
      const translations = await db
        .selectFrom('translation_feedback')
        .select(['locale', 'msgid', 'suggestion', 'severity', 'status', 'created_at'])
        .where('user_id', '=', userId)
        .orderBy('id')
        .execute();
      return { reports, translations };
    },

    /** Delete a user's reports and suggestions inside the erasure transaction. */
    async eraseUser(tx: Transaction<DB>, userId: number): Promise<void> {
      await tx.deleteFrom('feedback_reports').where('user_id', '=', userId).execute();
      await tx.deleteFrom('translation_feedback').where('user_id', '=', userId).execute();
    },
  };
}

export type FeedbackRepo = ReturnType<typeof createFeedbackRepo>;
