/**
 * Statement shapes shared by the areas' repositories for personal data (the export, the erasure and the daily
 * retention purge): each area calls them on its own tables only.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from './types.ts';

type Executor = Kysely<DB> | Transaction<DB>;

/** Rows deleted per statement by the retention purge: short statements, so no lock is held for long. */
export const PURGE_BATCH = 5000;

/**
 * Delete the rows of `table` whose `column` is before `before`, `batch` rows per statement (each its own
 * short transaction), oldest first, until none is left.
 * @param table a table with an integer `id` primary key
 * @returns the number of rows deleted
 */
export async function purgeOlderThan(
  db: Kysely<DB>,
  table: keyof DB & string,
  column: string,
  before: Date,
  batch = PURGE_BATCH,
): Promise<number> {
  let total = 0;
  for (;;) {
    const r = await sql<{ n: number }>`
      with d as (
        delete from ${sql.table(table)} where id in (
          select id from ${sql.table(table)} where ${sql.ref(column)} < ${before} order by id limit ${batch}
        ) returning 1
      ) select count(*)::int as n from d`.execute(db);
    const n = Number(r.rows[0]?.n ?? 0);
    total += n;
    if (n < batch) return total;
  }
}

/**
 * Rows of a query read `page` at a time by ascending `id` (keyset paging), as one async sequence: the
 * export streams a large section without holding it in memory.
 *
 * Each page runs in its own short transaction with bitmap scans and sorts off, so it is an ordered scan of an index
 * on `(<owner column>, id)` that stops after `page` rows. Without that the planner of a table never analysed (the
 * embedded database has no autovacuum) estimates a few rows and reads every remaining row of the owner, then sorts
 * them, for every page: the export of 20,000 messages read ~400,000 rows that way (bench/README.md, Export).
 * @param read the page after `afterId` (ascending id, at most `page` rows), run on `ex`
 */
export async function* pagedById<T extends { id: number | string }>(
  db: Kysely<DB>,
  read: (ex: Executor, afterId: number, page: number) => Promise<T[]>,
  page = 500,
): AsyncGenerator<T> {
  let after = 0;
  for (;;) {
    const rows = await db.transaction().execute(async (tx) => {
      await sql`select set_config('enable_bitmapscan', 'off', true), set_config('enable_sort', 'off', true)`.execute(
        tx,
      );
      return read(tx, after, page);
    });
    for (const r of rows) yield r;
    if (rows.length < page) return;
    after = Number(rows[rows.length - 1].id);
  }
}

/** What an actor's name becomes in rows kept after its account was erased (activity, authorship). */
export const DELETED_ACTOR = '[deleted]';

export type { Executor as PrivacyExecutor };
