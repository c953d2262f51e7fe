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

/** An owner's projects (id and name), oldest first. */
export function ownerProjects(ex: Executor, ownerId: number): Promise<Array<{ id: number; name: string }>> {
  return ex.selectFrom('projects').select(['id', 'name']).where('owner_id', '=', ownerId).orderBy('id').execute();
}

/** Names of the given projects by id. */
export async function projectNames(ex: Executor, ids: number[]): Promise<Map<number, string>> {
  if (!ids.length) return new Map();
  const rows = await ex.selectFrom('projects').select(['id', 'name']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** The record of one project as other areas describe it (memory, context), or undefined. */
export function projectRecord(ex: Executor, id: number) {
  return ex
    .selectFrom('projects')
    .select(['id', 'owner_id', 'name', 'display_name', 'description', 'niche', 'protocol', 'trial_mode', 'config'])
    .where('id', '=', id)
    .executeTakeFirst();
}
