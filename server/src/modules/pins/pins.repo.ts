/**
 * SQL of the pins area: `pins` (pinned notes of a project, by position) and `learnings` (short lessons).
 * Also the knowledge graph's optional read of notes (`notes`, `note_issue_links`), tables of a notes area
 * that may not exist in this database.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';

type Executor = Kysely<DB> | Transaction<DB>;

const PIN = ['id', 'text', 'issue_id', 'path', 'position', 'created_by', 'created_at'] as const;
const LEARNING = ['id', 'text', 'source', 'tags', 'author', 'created_at'] as const;

/** The pins area's queries over `db`; methods taking `ex` run in the caller's transaction. */
export function createPinsRepo(db: Kysely<DB>) {
  async function tableExists(name: string): Promise<boolean> {
    const r = await sql<{ t: string | null }>`select to_regclass(${name})::text as t`.execute(db);
    return !!r.rows[0]?.t;
  }

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

    /**
     * The notes of a project and their issue links, when the notes area's tables exist (`links` empty
     * without `note_issue_links`). @returns null without a `notes` table.
     */
    async notes(projectId: number): Promise<{
      notes: Array<{ id: number; title: string }>;
      links: Array<{ note_id: number; issue_id: number }>;
    } | null> {
      if (!(await tableExists('notes'))) return null;
      const notes = await sql<{
        id: number;
        title: string;
      }>`select id, title from notes where project_id = ${projectId}`.execute(db);
      if (!(await tableExists('note_issue_links'))) return { notes: notes.rows, links: [] };
      const links = await sql<{
        note_id: number;
        issue_id: number;
      }>`select l.note_id, l.issue_id from note_issue_links l join notes n on n.id = l.note_id where n.project_id = ${projectId}`.execute(
        db,
      );
      return { notes: notes.rows, links: links.rows };
    },
  };
}

export type PinsRepo = ReturnType<typeof createPinsRepo>;
