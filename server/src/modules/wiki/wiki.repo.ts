/**
 * SQL of the wiki area: `wiki_pages` (one row per page, keyed by project and relative path). Other areas
 * read pages through the functions here (the knowledge graph) or the wiki service.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { DELETED_ACTOR } from '../../db/privacy-sql.ts';

type Executor = Kysely<DB> | Transaction<DB>;

/** The wiki area's queries over `db`; methods taking `ex` run in the caller's transaction. */
export function createWikiRepo(db: Kysely<DB>) {
  return {
    /** Bytes the pages of these projects hold (paths and contents, UTF-8), for storage quotas. */
    async storageBytes(projectIds: number[]): Promise<number> {
      if (!projectIds.length) return 0;
      const r = await db
        .selectFrom('wiki_pages')
        .select(sql<string>`coalesce(sum(octet_length(content) + octet_length(path)), 0)::bigint`.as('n'))
        .where('project_id', 'in', projectIds)
        .executeTakeFirst();
      return Number(r?.n ?? 0);
    },

    /** Run `fn` in one transaction. */
    transaction: <T>(fn: (tx: Transaction<DB>) => Promise<T>): Promise<T> => db.transaction().execute(fn),

    /** Paths and titles of a project's pages, by path. */
    titles: (projectId: number) =>
      db
        .selectFrom('wiki_pages')
        .select(['path', 'title'])
        .where('project_id', '=', projectId)
        .orderBy('path')
        .execute(),

    /** One page `{path, title, content, updated_at, updated_by}`, or undefined. */
    page: (projectId: number, path: string) =>
      db
        .selectFrom('wiki_pages')
        .select(['path', 'title', 'content', 'updated_at', 'updated_by'])
        .where('project_id', '=', projectId)
        .where('path', '=', path)
        .executeTakeFirst(),

    /** Create or replace a page. @returns `{path, title, content, updated_at, updated_by}`. */
    upsert: (ex: Executor, p: { projectId: number; path: string; title: string; content: string; updatedBy: string }) =>
      ex
        .insertInto('wiki_pages')
        .values({
          project_id: p.projectId,
          path: p.path,
          title: p.title,
          content: p.content,
          updated_by: p.updatedBy,
        })
        .onConflict((oc) =>
          oc
            .columns(['project_id', 'path'])
            .doUpdateSet({ title: p.title, content: p.content, updated_by: p.updatedBy, updated_at: new Date() }),
        )
        .returning(['path', 'title', 'content', 'updated_at', 'updated_by'])
        .executeTakeFirstOrThrow(),

    /** The next `limit` pages after path `after` (null: from the start), by path (keyset pagination). */
    pagesAfter(projectId: number, after: string | null, limit: number) {
      let q = db.selectFrom('wiki_pages').select(['path', 'content', 'updated_at']).where('project_id', '=', projectId);
      if (after !== null) q = q.where('path', '>', after);
      return q.orderBy('path').limit(limit).execute();
    },

    /** Title and content of one page (the index's document), or undefined. */
    document: (projectId: number, path: string) =>
      db
        .selectFrom('wiki_pages')
        .select(['title', 'content'])
        .where('project_id', '=', projectId)
        .where('path', '=', path)
        .executeTakeFirst(),

    /** Every page of a project with its text (the knowledge graph). */
    forGraph: (projectId: number) =>
      db.selectFrom('wiki_pages').select(['path', 'title', 'content']).where('project_id', '=', projectId).execute(),

    // Personal data (privacy export and erasure, retention).

    /** The export's `wiki` pages of a project. */
    exportProject: (projectId: number) =>
      db
        .selectFrom('wiki_pages')
        .select(['path', 'title', 'content', 'updated_by', 'created_at', 'updated_at'])
        .where('project_id', '=', projectId)
        .orderBy('path')
        .execute(),

    /** Erasure: a project's pages. */
    async eraseProject(tx: Transaction<DB>, projectId: number): Promise<void> {
      await tx.deleteFrom('wiki_pages').where('project_id', '=', projectId).execute();
    },

    /** Erasure: pages of other projects keep no name of the user. */
    async eraseUser(tx: Transaction<DB>, names: string[]): Promise<void> {
      if (names.length)
        await tx
          .updateTable('wiki_pages')
          .set({ updated_by: DELETED_ACTOR })
          .where('updated_by', 'in', names)
          .execute();
    },
  };
}

export type WikiRepo = ReturnType<typeof createWikiRepo>;
