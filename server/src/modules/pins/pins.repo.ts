/**
 * SQL of the pins area: `pins` (pinned notes of a project, by position) and `learnings` (short lessons).
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { DELETED_ACTOR } from '../../db/privacy-sql.ts';

type Executor = Kysely<DB> | Transaction<DB>;

const PIN = ['id', 'text', 'issue_id', 'path', 'position', 'created_by', 'created_at'] as const;
const LEARNING = ['id', 'text', 'source', 'tags', 'author', 'created_at'] as const;

/** The pins area's queries over `db`; methods taking `ex` run in the caller's transaction. */
export function createPinsRepo(db: Kysely<DB>) {
  return {
    /** Run `fn` in one transaction. */
    transaction: <T>(fn: (tx: Transaction<DB>) => Promise<T>): Promise<T> => db.transaction().execute(fn),

    /** A project's pins by position. */
    pins: (projectId: number) =>
      db.selectFrom('pins').select(PIN).where('project_id', '=', projectId).orderBy('position').orderBy('id').execute(),

    /** The highest pin position of a project, -1 without pins. */
    async lastPosition(ex: Executor, projectId: number): Promise<number> {
      const m = await ex
        .selectFrom('pins')
        .select((eb) => eb.fn.max('position').as('m'))
        .where('project_id', '=', projectId)
        .executeTakeFirst();
      return m?.m ?? -1;
    },

    /** Insert a pin. @returns the pin. */
    insertPin: (
      ex: Executor,
      p: {
        projectId: number;
        text: string;
        issueId: number | null;
        path: string | null;
        position: number;
        createdBy: string;
      },
    ) =>
      ex
        .insertInto('pins')
        .values({
          project_id: p.projectId,
          text: p.text,
          issue_id: p.issueId,
          path: p.path,
          position: p.position,
          created_by: p.createdBy,
        })
        .returning(PIN)
        .executeTakeFirstOrThrow(),

    /** Delete a pin of a project. @returns whether it existed. */
    async removePin(projectId: number, id: number): Promise<boolean> {
      const r = await db.deleteFrom('pins').where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },

    /** A project's learnings, newest first; with `tag`, those carrying it. */
    learnings(projectId: number, q: { tag?: string; limit: number }) {
      let qb = db.selectFrom('learnings').select(LEARNING).where('project_id', '=', projectId);
      if (q.tag) qb = qb.where(sql<boolean>`tags @> ${JSON.stringify([q.tag])}::jsonb`);
      return qb.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(q.limit).execute();
    },

    /** Record a learning (tags stored as given). @returns the learning. */
    insertLearning: (l: { projectId: number; text: string; source: string | null; tags: string[]; author: string }) =>
      db
        .insertInto('learnings')
        .values({
          project_id: l.projectId,
          text: l.text,
          source: l.source,
          tags: JSON.stringify(l.tags),
          author: l.author,
        })
        .returning(LEARNING)
        .executeTakeFirstOrThrow(),

    // Personal data (privacy export and erasure, retention).

    /** The export's `pins` of a project: pins and learnings. */
    async exportProject(projectId: number) {
      return {
        pins: await db
          .selectFrom('pins')
          .select(['id', 'text', 'issue_id', 'path', 'position', 'created_by', 'created_at'])
          .where('project_id', '=', projectId)
          .orderBy('position')
          .execute(),
        learnings: await db
          .selectFrom('learnings')
          .select(['id', 'text', 'source', 'tags', 'author', 'created_at'])
          .where('project_id', '=', projectId)
          .orderBy('id')
          .execute(),
      };
    },

    /** Erasure: a project's pins and learnings. */
    async eraseProject(tx: Transaction<DB>, projectId: number): Promise<void> {
      await tx.deleteFrom('pins').where('project_id', '=', projectId).execute();
      await tx.deleteFrom('learnings').where('project_id', '=', projectId).execute();
    },

    /** Erasure: pins and learnings of other projects keep no name of the user. */
    async eraseUser(tx: Transaction<DB>, names: string[]): Promise<void> {
      if (!names.length) return;
      await tx.updateTable('pins').set({ created_by: DELETED_ACTOR }).where('created_by', 'in', names).execute();
      await tx.updateTable('learnings').set({ author: DELETED_ACTOR }).where('author', 'in', names).execute();
    },
  };
}

export type PinsRepo = ReturnType<typeof createPinsRepo>;
