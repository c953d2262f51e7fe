/**
 * SQL of instance leases: the `instances` table (one row per process of the service, docs/ARCHITECTURE.md,
 * "Crash recovery and instance leases"). Times of leases are the database's (`now()`), so the instances' clocks
 * never have to agree.
 */
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/types.ts';

/** A row as the rules read it. */
export interface InstanceRecord {
  id: string;
  name: string;
  host: string;
  boot_id: string | null;
  pid: number;
  process_started_at: Date;
}

const until = (leaseMs: number) => sql<Date>`now() + ${leaseMs} * interval '1 millisecond'`;

/** The repository of instance leases (see the module header). */
export function createInstancesRepo(db: Kysely<DB>) {
  return {
    /** Insert this process's row with a lease of `leaseMs` (or take its row back after it was marked stopped). */
    async register(row: InstanceRecord & { process_started_at: Date }, leaseMs: number): Promise<void> {
      await db
        .insertInto('instances')
        .values({ ...row, expires_at: until(leaseMs) })
        .onConflict((oc) =>
          oc.column('id').doUpdateSet({
            expires_at: until(leaseMs),
            renewed_at: sql`now()`,
            stopped_at: null,
            stop_reason: null,
          }),
        )
        .execute();
    },

    /** Extend the lease of `id` by `leaseMs`. @returns false when the row was marked stopped (taken over) or is gone. */
    async renew(id: string, leaseMs: number): Promise<boolean> {
      const r = await db
        .updateTable('instances')
        .set({ expires_at: until(leaseMs), renewed_at: sql`now()` })
        .where('id', '=', id)
        .where('stopped_at', 'is', null)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },

    /** Rows not marked stopped (live or not yet noticed dead), other than `exceptId`. */
    unstopped: (exceptId: string): Promise<InstanceRecord[]> =>
      db
        .selectFrom('instances')
        .select(['id', 'name', 'host', 'boot_id', 'pid', 'process_started_at'])
        .where('stopped_at', 'is', null)
        .where('id', '<>', exceptId)
        .execute(),

    /**
     * Mark stopped, with `reason`, the rows of `ids` still unstopped, and with `lapsed` only those whose lease has
     * expired. One instance wins each row (the update is the claim). @returns the ids this call marked.
     */
    async markStopped(ids: string[] | 'lapsed', reason: string): Promise<string[]> {
      let q = db
        .updateTable('instances')
        .set({ stopped_at: sql`now()`, stop_reason: reason })
        .where('stopped_at', 'is', null);
      q = ids === 'lapsed' ? q.where('expires_at', '<', sql<Date>`now()`) : ids.length ? q.where('id', 'in', ids) : q;
      if (ids !== 'lapsed' && !ids.length) return [];
      return (await q.returning('id').execute()).map((r) => r.id);
    },

    /**
     * The state of `ids` now: `live` (unstopped), `dead` (stopped); an id with no row is neither (unknown: a run
     * claimed before instances kept leases, or by a row pruned long after it stopped).
     */
    async states(ids: string[]): Promise<{ live: Set<string>; dead: Set<string> }> {
      const live = new Set<string>();
      const dead = new Set<string>();
      if (!ids.length) return { live, dead };
      const rows = await db.selectFrom('instances').select(['id', 'stopped_at']).where('id', 'in', ids).execute();
      for (const r of rows) (r.stopped_at ? dead : live).add(r.id);
      return { live, dead };
    },

    /** Delete rows stopped more than `days` days ago. @returns how many. */
    async prune(days: number): Promise<number> {
      const r = await db
        .deleteFrom('instances')
        .where('stopped_at', '<', sql<Date>`now() - ${days} * interval '1 day'`)
        .executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
}

export type InstancesRepo = ReturnType<typeof createInstancesRepo>;
