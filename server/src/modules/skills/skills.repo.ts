/**
 * SQL of the skills area: `skills` (global when `owner_project` is null, else one project's), `skill_versions`
 * (every change of a skill) and `skill_updates` (a global skill's new version offered to a fork). Other areas
 * read skills through the functions here (the knowledge graph) or the skills service.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { DELETED_ACTOR } from '../../db/privacy-sql.ts';

type Executor = Kysely<DB> | Transaction<DB>;
/** Namespace of the per-user publishing lock (`pg_advisory_xact_lock(int, int)`). */
const PUBLISH_LOCK = 30_024;
export type UpdateStatus = 'pending' | 'approved' | 'rejected';

/** Columns of a skill as the service reads it (`owner_project` is the project id). */
const SKILL = [
  's.id',
  's.owner_project',
  's.name',
  's.description',
  's.content',
  's.version',
  's.forked_from',
  's.forked_version',
  's.created_by',
  's.created_at',
  's.updated_at',
] as const;

/**
 * Erase skills by id: forks of them keep their copy (no origin), updates offered from or to them and their
 * versions go, then the skills.
 */
async function eraseSkills(tx: Transaction<DB>, ids: number[]): Promise<void> {
  if (!ids.length) return;
  await tx
    .updateTable('skills')
    .set({ forked_from: null, forked_version: null })
    .where('forked_from', 'in', ids)
    .execute();
  await tx
    .deleteFrom('skill_updates')
    .where((eb) => eb.or([eb('fork_id', 'in', ids), eb('source_id', 'in', ids)]))
    .execute();
  await tx.deleteFrom('skill_versions').where('skill_id', 'in', ids).execute();
  await tx.deleteFrom('skills').where('id', 'in', ids).execute();
}

/** The skills area's queries over `db`; methods taking `tx`/`ex` run in the caller's transaction. */
export function createSkillsRepo(db: Kysely<DB>) {
  const skills = (ex: Executor) => ex.selectFrom('skills as s').select(SKILL);

  /** A skill update with the fork's and the source's names and the offered version's text. */
  const updates = () =>
    db
      .selectFrom('skill_updates as u')
      .innerJoin('skills as f', 'f.id', 'u.fork_id')
      .innerJoin('skills as g', 'g.id', 'u.source_id')
      .leftJoin('skill_versions as v', (j) =>
        j.onRef('v.skill_id', '=', 'u.source_id').onRef('v.version', '=', 'u.to_version'),
      )
      .select([
        'u.id',
        'u.project_id',
        'u.fork_id',
        'f.name as fork_name',
        'u.source_id',
        'g.name as source_name',
        'u.from_version',
        'u.to_version',
        'u.status',
        'v.description',
        'v.content',
        'u.created_at',
      ]);

  return {
    /** Run `fn` in one transaction. */
    transaction: <T>(fn: (tx: Transaction<DB>) => Promise<T>): Promise<T> => db.transaction().execute(fn),

    /** One skill, or undefined. */
    byId: (id: number, ex: Executor = db) => skills(ex).where('s.id', '=', id).executeTakeFirst(),

    /** The global skill of this name, or undefined. */
    globalByName: (name: string) =>
      skills(db).where('s.owner_project', 'is', null).where('s.name', '=', name).executeTakeFirst(),

    /** The global skills, by name. */
    globals: () => skills(db).where('s.owner_project', 'is', null).orderBy('s.name').execute(),

    /** The skills a project sees: the global ones and its own, by name (a project's after a global one). */
    visible: (projectId: number) =>
      skills(db)
        .where((eb) => eb.or([eb('s.owner_project', 'is', null), eb('s.owner_project', '=', projectId)]))
        .orderBy('s.name')
        .orderBy('s.owner_project')
        .execute(),

    /** A project's own skills (its forks and installed skills included), by name: what its workers' prompts may hold. */
    own: (projectId: number) => skills(db).where('s.owner_project', '=', projectId).orderBy('s.name').execute(),

    /**
     * Serialize a user's publishing for the rest of the transaction, then count the global skills they published.
     * @returns how many global skills `userId` published.
     */
    async lockAndCountPublished(tx: Transaction<DB>, userId: number): Promise<number> {
      await sql`select pg_advisory_xact_lock(${PUBLISH_LOCK}::int, ${userId}::int)`.execute(tx);
      const r = await tx
        .selectFrom('skills')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('owner_project', 'is', null)
        .where('created_by', '=', userId)
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },

    /** Whether the user added a skill, global or a project's (the onboarding checklist's "skill" step). */
    async anyAddedBy(userId: number): Promise<boolean> {
      const row = await db
        .selectFrom('skills')
        .select('id')
        .where('created_by', '=', userId)
        .limit(1)
        .executeTakeFirst();
      return !!row;
    },

    /** A project's forks of global skills (those with a `forked_version`), by name. */
    forks: (projectId: number) =>
      skills(db)
        .where('s.owner_project', '=', projectId)
        .where('s.forked_version', 'is not', null)
        .orderBy('s.name')
        .execute(),

    /** Whether the skill is or was a fork (a fork whose source was deleted keeps `forked_version`). */
    async wasFork(id: number): Promise<boolean> {
      const r = await db
        .selectFrom('skills')
        .select('id')
        .where('id', '=', id)
        .where('forked_version', 'is not', null)
        .executeTakeFirst();
      return r !== undefined;
    },

    /** Insert a skill at version 1. @returns its id. @throws the database's unique violation (23505) on a taken name. */
    async insert(
      tx: Executor,
      s: {
        ownerProject: number | null;
        name: string;
        description: string;
        content: string;
        forkedFrom: number | null;
        forkedVersion: number | null;
        createdBy: number;
      },
    ): Promise<number> {
      const { id } = await tx
        .insertInto('skills')
        .values({
          owner_project: s.ownerProject,
          name: s.name,
          description: s.description,
          content: s.content,
          forked_from: s.forkedFrom,
          forked_version: s.forkedVersion,
          created_by: s.createdBy,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return id;
    },

    /** Lock a skill's row for the rest of the transaction. @returns the whole row, or undefined. */
    lockForUpdate: (tx: Transaction<DB>, id: number) =>
      tx.selectFrom('skills').selectAll().where('id', '=', id).forUpdate().executeTakeFirst(),

    /** Change a skill's text, version or fork version; `updated_at` becomes now. */
    async update(
      tx: Executor,
      id: number,
      set: { name?: string; description?: string; content?: string; version: number; forkedVersion?: number },
    ): Promise<void> {
      const { forkedVersion, ...rest } = set;
      await tx
        .updateTable('skills')
        .set({
          ...rest,
          ...(forkedVersion !== undefined ? { forked_version: forkedVersion } : {}),
          updated_at: new Date(),
        })
        .where('id', '=', id)
        .execute();
    },

    /** Delete a skill (its versions and offered updates go with it). */
    async remove(tx: Executor, id: number): Promise<void> {
      await tx.deleteFrom('skills').where('id', '=', id).execute();
    },

    /** Keep a version of a skill. */
    async insertVersion(
      tx: Executor,
      v: {
        skillId: number;
        version: number;
        name: string;
        description: string;
        content: string;
        author: string;
        reason: string;
      },
    ): Promise<void> {
      await tx
        .insertInto('skill_versions')
        .values({
          skill_id: v.skillId,
          version: v.version,
          name: v.name,
          description: v.description,
          content: v.content,
          author: v.author,
          reason: v.reason,
        })
        .execute();
    },

    /** Every version of a skill, newest first. */
    versions: (skillId: number) =>
      db
        .selectFrom('skill_versions')
        .select(['version', 'name', 'description', 'content', 'author', 'reason', 'created_at'])
        .where('skill_id', '=', skillId)
        .orderBy('version', 'desc')
        .execute(),

    /** The forks of a skill. */
    forksOf: (tx: Executor, sourceId: number) =>
      tx
        .selectFrom('skills')
        .select(['id', 'owner_project', 'forked_version'])
        .where('forked_from', '=', sourceId)
        .execute(),

    /**
     * Offer version `toVersion` of `sourceId` to fork `forkId` of project `projectId`: the fork's pending
     * offer moves to the new version (offered now), else a new offer from `fromVersion` is made.
     */
    async offer(
      tx: Executor,
      o: { projectId: number; forkId: number; sourceId: number; fromVersion: number; toVersion: number },
    ): Promise<void> {
      const pending = await tx
        .selectFrom('skill_updates')
        .select('id')
        .where('fork_id', '=', o.forkId)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      if (pending)
        await tx
          .updateTable('skill_updates')
          .set({ to_version: o.toVersion, created_at: new Date() })
          .where('id', '=', pending.id)
          .execute();
      else
        await tx
          .insertInto('skill_updates')
          .values({
            project_id: o.projectId,
            fork_id: o.forkId,
            source_id: o.sourceId,
            from_version: o.fromVersion,
            to_version: o.toVersion,
          })
          .execute();
    },

    /** One offered update (`description`/`content`: the offered version's, null when that version is gone). */
    updateById: (id: number) => updates().where('u.id', '=', id).executeTakeFirst(),

    /**
     * Offered updates of `status`, newest first, at most 500; of the given projects, or of all when
     * `projectIds` is undefined.
     */
    async listUpdates(status: UpdateStatus, projectIds?: number[]) {
      if (projectIds && !projectIds.length) return [];
      let q = updates().where('u.status', '=', status);
      if (projectIds) q = q.where('u.project_id', 'in', projectIds);
      return q.orderBy('u.id', 'desc').limit(500).execute();
    },

    /** Decide a pending update. @returns false when it was no longer pending. */
    async decide(tx: Executor, id: number, status: 'approved' | 'rejected', decidedBy: string): Promise<boolean> {
      const r = await tx
        .updateTable('skill_updates')
        .set({ status, decided_by: decidedBy, decided_at: new Date() })
        .where('id', '=', id)
        .where('status', '=', 'pending')
        .returning('id')
        .executeTakeFirst();
      return r !== undefined;
    },

    /** The skills a project sees with their text (the knowledge graph). */
    forGraph: (projectId: number) =>
      db
        .selectFrom('skills')
        .select(['id', 'name', 'content', 'description', 'forked_from', 'owner_project'])
        .where((eb) => eb.or([eb('owner_project', 'is', null), eb('owner_project', '=', projectId)]))
        .execute(),

    // Personal data (privacy export and erasure, retention).

    /** The export's `skills` of a project. */
    exportProject: (projectId: number) =>
      db
        .selectFrom('skills')
        .select(['id', 'name', 'description', 'content', 'version', 'forked_from', 'created_at', 'updated_at'])
        .where('owner_project', '=', projectId)
        .orderBy('id')
        .execute(),

    /** The export's `published_skills`: global skills the user published. */
    exportPublished: (userId: number) =>
      db
        .selectFrom('skills')
        .select(['id', 'name', 'description', 'content', 'version', 'created_at', 'updated_at'])
        .where('owner_project', 'is', null)
        .where('created_by', '=', userId)
        .orderBy('id')
        .execute(),

    /** Erasure: a project's skills (their versions, updates offered to or from them; forks keep their copy). */
    async eraseProject(tx: Transaction<DB>, projectId: number): Promise<void> {
      const ids = (await tx.selectFrom('skills').select('id').where('owner_project', '=', projectId).execute()).map(
        (r) => r.id,
      );
      await tx.deleteFrom('skill_updates').where('project_id', '=', projectId).execute();
      await eraseSkills(tx, ids);
    },

    /**
     * Erasure: the global skills the user published (as a project's), and their name on versions and decisions
     * elsewhere. @returns the ids of the erased global skills (their documents leave the semantic index).
     */
    async eraseUser(tx: Transaction<DB>, userId: number, names: string[]): Promise<number[]> {
      const ids = (
        await tx
          .selectFrom('skills')
          .select('id')
          .where('owner_project', 'is', null)
          .where('created_by', '=', userId)
          .execute()
      ).map((r) => r.id);
      await eraseSkills(tx, ids);
      await tx.updateTable('skills').set({ created_by: null }).where('created_by', '=', userId).execute();
      if (names.length) {
        await tx.updateTable('skill_versions').set({ author: DELETED_ACTOR }).where('author', 'in', names).execute();
        await tx
          .updateTable('skill_updates')
          .set({ decided_by: DELETED_ACTOR })
          .where('decided_by', 'in', names)
          .execute();
      }
      return ids;
    },

    /** Names of every global skill (the sweep of skill folders left by erased skills). */
    globalNames: async (): Promise<Set<string>> =>
      new Set(
        (await db.selectFrom('skills').select('name').where('owner_project', 'is', null).execute()).map((r) => r.name),
      ),
  };
}

export type SkillsRepo = ReturnType<typeof createSkillsRepo>;
