/**
 * SQL of the projects area: `projects` and `active_issue_bindings`. Other areas reach projects through
 * the access rules (`access.project`) or the functions here.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';

type Executor = Kysely<DB> | Transaction<DB>;

/** Ids of an owner's projects. */
export async function ownerProjectIds(ex: Executor, ownerId: number): Promise<number[]> {
  const rows = await ex.selectFrom('projects').select('id').where('owner_id', '=', ownerId).execute();
  return rows.map((r) => r.id);
}

/** Number of an owner's projects. */
export async function countOwnerProjects(ex: Executor, ownerId: number): Promise<number> {
  const r = await ex
    .selectFrom('projects')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('owner_id', '=', ownerId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}
