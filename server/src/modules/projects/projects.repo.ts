/**
 * SQL of the projects area: `projects` and `active_issue_bindings`. `createProjectsRepo(db)` is the area's
 * repository (the projects and workers services use it); other areas reach projects through the access
 * rules (`access.project`) or the standalone functions here, with their own executor.
 */
import { type Insertable, type Kysely, type Selectable, sql, type Transaction } from 'kysely';
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

/** A project row as stored. */
export type ProjectRow = Selectable<DB['projects']>;

/** The repository of the projects area (see the module header). */
export function createProjectsRepo(db: Kysely<DB>) {
  return {
    /** Run `fn` in one transaction. */
    transaction: <T>(fn: (tx: Transaction<DB>) => Promise<T>): Promise<T> => db.transaction().execute(fn),

    /** Ids of an owner's projects. */
    ownerProjectIds: (ownerId: number, ex: Executor = db) => ownerProjectIds(ex, ownerId),

    /** Number of an owner's projects. */
    countOwned: (ownerId: number, ex: Executor = db) => countOwnerProjects(ex, ownerId),

    /** An owner's projects (id and name), oldest first. */
    ownedBy: (ownerId: number, ex: Executor = db) => ownerProjects(ex, ownerId),

    /** Name and owner of the given projects by id. */
    async namesAndOwners(ids: number[]): Promise<Map<number, { name: string; owner_id: number }>> {
      if (!ids.length) return new Map();
      const rows = await db.selectFrom('projects').select(['id', 'name', 'owner_id']).where('id', 'in', ids).execute();
      return new Map(rows.map((r) => [r.id, { name: r.name, owner_id: r.owner_id }]));
    },

    /** The record of one project (see `projectRecord`), or undefined. */
    record: (id: number) => projectRecord(db, id),

    /** What the memory loader indexes of a project (its manifest document), or undefined. */
    manifest: (id: number) =>
      db
        .selectFrom('projects')
        .select(['name', 'display_name', 'description', 'niche', 'team_preset', 'protocol'])
        .where('id', '=', id)
        .executeTakeFirst(),

    /** Every column of project `id`. @throws NoResultError when there is none. */
    row: (id: number): Promise<ProjectRow> =>
      db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirstOrThrow(),

    /** Every column of an owner's projects, oldest first. */
    rowsOf: (ownerId: number): Promise<ProjectRow[]> =>
      db.selectFrom('projects').selectAll().where('owner_id', '=', ownerId).orderBy('id').execute(),

    /** Whether any project has this technical name (names are unique across the service). */
    async nameTaken(ex: Executor, name: string): Promise<boolean> {
      const r = await ex.selectFrom('projects').select('id').where('name', '=', name).executeTakeFirst();
      return !!r;
    },

    /** Insert a project. @returns its row. Fails with 23505 when the name is taken (by any owner). */
    insert: (ex: Executor, values: Insertable<DB['projects']>): Promise<ProjectRow> =>
      ex.insertInto('projects').values(values).returningAll().executeTakeFirstOrThrow(),

    /** An owner's trial-mode projects (trial status), oldest first. */
    trialProjects: (ownerId: number) =>
      db
        .selectFrom('projects')
        .select(['id', 'name', 'display_name', 'trial_mode', 'uses_platform_key'])
        .where('owner_id', '=', ownerId)
        .where('trial_mode', '=', true)
        .orderBy('id')
        .execute(),

    /** Replace the project's `config` (JSON object). */
    async setConfig(id: number, config: Record<string, unknown>): Promise<void> {
      await db
        .updateTable('projects')
        .set({ config: JSON.stringify(config), updated_at: new Date() })
        .where('id', '=', id)
        .execute();
    },

    /** The project's rules text and when the project last changed. */
    protocol: (id: number) =>
      db.selectFrom('projects').select(['protocol', 'updated_at']).where('id', '=', id).executeTakeFirstOrThrow(),

    /** Replace the project's rules text. @returns it with the new `updated_at`. */
    setProtocol: (id: number, protocol: string) =>
      db
        .updateTable('projects')
        .set({ protocol, updated_at: new Date() })
        .where('id', '=', id)
        .returning(['protocol', 'updated_at'])
        .executeTakeFirstOrThrow(),

    /** The blob key of the project's icon (null without one). */
    async iconKey(id: number): Promise<string | null> {
      const r = await db.selectFrom('projects').select('icon_key').where('id', '=', id).executeTakeFirstOrThrow();
      return r.icon_key;
    },

    /** Store the blob key of the project's icon. */
    async setIconKey(id: number, key: string): Promise<void> {
      await db.updateTable('projects').set({ icon_key: key, updated_at: new Date() }).where('id', '=', id).execute();
    },

    /** Record an active-issue binding. @returns the issue id, title and time. */
    insertBinding: (
      ex: Executor,
      b: { projectId: number; userId: number; issueId: number; title: string | null; source: string },
    ) =>
      ex
        .insertInto('active_issue_bindings')
        .values({ project_id: b.projectId, user_id: b.userId, issue_id: b.issueId, title: b.title, source: b.source })
        .returning(['issue_id', 'title', 'created_at'])
        .executeTakeFirstOrThrow(),

    /** The project's latest binding made since `since`, or undefined. */
    latestBinding: (projectId: number, since: Date) =>
      db
        .selectFrom('active_issue_bindings')
        .select(['issue_id', 'title', 'created_at'])
        .where('project_id', '=', projectId)
        .where('created_at', '>=', since)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .executeTakeFirst(),

    // Personal data (privacy export and erasure, retention).

    /** The export's project record (its settings and rules). */
    exportProject: (projectId: number) =>
      db
        .selectFrom('projects')
        .select([
          'id',
          'name',
          'display_name',
          'description',
          'icon',
          'color',
          'niche',
          'team_preset',
          'config',
          'protocol',
          'trial_mode',
          'uses_platform_key',
          'created_at',
          'updated_at',
        ])
        .where('id', '=', projectId)
        .executeTakeFirst(),

    /** Erasure: a project's issue bindings, then the project row (after every other area's rows of it). */
    async eraseProject(tx: Transaction<DB>, projectId: number): Promise<void> {
      await tx.deleteFrom('active_issue_bindings').where('project_id', '=', projectId).execute();
      await tx.deleteFrom('projects').where('id', '=', projectId).execute();
    },

    /** Erasure: the user's issue bindings in other projects. */
    async eraseUser(tx: Transaction<DB>, userId: number): Promise<void> {
      await tx.deleteFrom('active_issue_bindings').where('user_id', '=', userId).execute();
    },
  };
}

export type ProjectsRepo = ReturnType<typeof createProjectsRepo>;
