/**
 * SQL of the onboarding area: `onboarding_progress` (one row per user who touched the checklist) and
 * `onboarding_videos` (the stored video slots; absent slots read as the built-in defaults).
 */
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { DELETED_ACTOR } from '../../db/privacy-sql.ts';

export type Executor = Kysely<DB> | Transaction<DB>;

/** A stored progress row. */
export type ProgressRow = Selectable<DB['onboarding_progress']>;

/** Columns of a progress row to change; `state` is stored as JSON. */
export interface ProgressPatch {
  state?: Record<string, 'completed' | 'skipped'>;
  source?: 'web' | 'cli' | null;
  completed_at?: Date | null;
  dismissed_at?: Date | null;
  updated_at: Date;
}

export function createOnboardingRepo(db: Kysely<DB>) {
  return {
    /** Run `fn` in one transaction; pass `tx` to every call inside it. */
    transaction: <T>(fn: (tx: Transaction<DB>) => Promise<T>): Promise<T> => db.transaction().execute(fn),

    /** A user's progress row, or undefined for an untouched user. */
    progress: (userId: number, ex: Executor = db): Promise<ProgressRow | undefined> =>
      ex.selectFrom('onboarding_progress').selectAll().where('user_id', '=', userId).executeTakeFirst(),

    /** A user's progress row locked for the rest of the transaction, or undefined for an untouched user. */
    lockProgress: (tx: Transaction<DB>, userId: number): Promise<ProgressRow | undefined> =>
      tx.selectFrom('onboarding_progress').selectAll().where('user_id', '=', userId).forUpdate().executeTakeFirst(),

    /**
     * A user's progress row, created empty when missing, locked for the rest of the transaction. One
     * statement (insert, or a no-op update on conflict, which locks the row): an insert-then-select let a
     * concurrent reset delete the row in between, and the select found nothing.
     */
    createAndLockProgress: (tx: Transaction<DB>, userId: number): Promise<ProgressRow> =>
      tx
        .insertInto('onboarding_progress')
        .values({ user_id: userId })
        .onConflict((oc) => oc.column('user_id').doUpdateSet((eb) => ({ user_id: eb.ref('excluded.user_id') })))
        .returningAll()
        .executeTakeFirstOrThrow(),

    /** Change the given columns of a user's (existing) progress row. @returns the row after the change. */
    updateProgress: (ex: Executor, userId: number, patch: ProgressPatch): Promise<ProgressRow> => {
      const { state, ...rest } = patch;
      return ex
        .updateTable('onboarding_progress')
        .set({ ...(state !== undefined ? { state: JSON.stringify(state) } : {}), ...rest })
        .where('user_id', '=', userId)
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    /** Delete a user's progress row (when any). */
    async deleteProgress(ex: Executor, userId: number): Promise<void> {
      await ex.deleteFrom('onboarding_progress').where('user_id', '=', userId).execute();
    },

    /** Every stored video slot. */
    videos: () => db.selectFrom('onboarding_videos').selectAll().execute(),

    /** Store one video slot (inserted or replaced), recording who changed it. */
    async upsertVideo(
      ex: Executor,
      v: { slot: string; url: string | null; seconds: number; title: string; updatedBy: string },
    ): Promise<void> {
      const { slot, url, seconds, title, updatedBy } = v;
      await ex
        .insertInto('onboarding_videos')
        .values({ slot, url, seconds, title, updated_by: updatedBy })
        .onConflict((oc) =>
          oc.column('slot').doUpdateSet({ url, seconds, title, updated_by: updatedBy, updated_at: new Date() }),
        )
        .execute();
    },

    // Personal data (privacy export and erasure, retention).

    /** The export's `onboarding` progress of a user (null when untouched). */
    exportUser: async (userId: number) =>
      (await db
        .selectFrom('onboarding_progress')
        .select(['state', 'source', 'completed_at', 'dismissed_at', 'started_at', 'updated_at'])
        .where('user_id', '=', userId)
        .executeTakeFirst()) ?? null,

    /** Erasure: the user's progress; videos they updated keep no name of theirs. */
    async eraseUser(tx: Transaction<DB>, userId: number, names: string[]): Promise<void> {
      await tx.deleteFrom('onboarding_progress').where('user_id', '=', userId).execute();
      if (names.length)
        await tx
          .updateTable('onboarding_videos')
          .set({ updated_by: DELETED_ACTOR })
          .where('updated_by', 'in', names)
          .execute();
    },
  };
}

export type OnboardingRepo = ReturnType<typeof createOnboardingRepo>;
