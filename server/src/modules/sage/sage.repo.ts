/** The sage area's SQL: kept reviews and benchmarks (`sage_results`), the catalog's index state. */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';

export function createSageRepo(db: Kysely<DB>) {
  return {
    /** Keep one review or benchmark. @returns its id and time. */
    insertResult: (r: {
      kind: 'analyze' | 'benchmark';
      skillRef: string;
      skillName: string;
      userId: number;
      projectId: number | null;
      score: number | null;
      model: string | null;
      result: Record<string, unknown>;
    }) =>
      db
        .insertInto('sage_results')
        .values({
          kind: r.kind,
          skill_ref: r.skillRef,
          skill_name: r.skillName,
          user_id: r.userId,
          project_id: r.projectId,
          score: r.score,
          model: r.model,
          result: JSON.stringify(r.result),
        })
        .returning(['id', 'created_at'])
        .executeTakeFirstOrThrow(),

    /** The caller's newest results (at most `limit`), newest first. */
    results: (userId: number, limit: number) =>
      db
        .selectFrom('sage_results')
        .select(['id', 'kind', 'skill_ref', 'skill_name', 'score', 'model', 'created_at'])
        .where('user_id', '=', userId)
        .orderBy('id', 'desc')
        .limit(limit)
        .execute(),

    /** The catalog's size, content hash and last index time (undefined before the first index). */
    catalogState: () =>
      db.selectFrom('sage_catalog_state').select(['size', 'content_hash', 'indexed_at']).executeTakeFirst(),

    /** Record that the catalog of `size` skills and `hash` was indexed now. */
    async setCatalogState(size: number, hash: string): Promise<void> {
      await db
        .insertInto('sage_catalog_state')
        .values({ id: 1, size, content_hash: hash, indexed_at: sql<Date>`now()` })
        .onConflict((oc) => oc.column('id').doUpdateSet({ size, content_hash: hash, indexed_at: sql<Date>`now()` }))
        .execute();
    },

    /** The user's results, for the export. */
    exportUser: (userId: number) =>
      db
        .selectFrom('sage_results')
        .select(['id', 'kind', 'skill_ref', 'skill_name', 'project_id', 'score', 'model', 'result', 'created_at'])
        .where('user_id', '=', userId)
        .orderBy('id')
        .execute(),
    async eraseUser(tx: Transaction<DB>, userId: number): Promise<void> {
      await tx.deleteFrom('sage_results').where('user_id', '=', userId).execute();
    },
    async eraseProject(tx: Transaction<DB>, projectId: number): Promise<void> {
      await tx.deleteFrom('sage_results').where('project_id', '=', projectId).execute();
    },
  };
}
export type SageRepo = ReturnType<typeof createSageRepo>;
