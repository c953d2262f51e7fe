/**
 * SQL of the throttle area: `rate_limit_hits`, the rate-limit counters every instance shares (fixed windows,
 * with an optional exponential backoff once a key is over its limit). Each hit is one atomic upsert, so
 * concurrent requests on several instances are all counted.
 */
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/types.ts';

/** A key's state: hits in its window and the milliseconds until the window (or its backoff) ends. */
export interface HitState {
  current: number;
  ttl: number;
}

/** The longest a backoff may grow to (ms): one day. */
export const MAX_BACKOFF_MS = 24 * 60 * 60 * 1000;

export function createThrottleRepo(db: Kysely<DB>) {
  return {
    /**
     * Count one hit of `key` in a window of `windowMs`. A key over `max` with `backoff` has its window renewed
     * at `windowMs · 2^(hits − max − 1)` from now (at most a day), so each further hit doubles the wait.
     */
    async hit(key: string, windowMs: number, max: number, backoff: boolean): Promise<HitState> {
      const window = sql`(${windowMs}::double precision * interval '1 millisecond')`;
      const grown = sql`(least(${windowMs}::double precision * power(2::double precision, greatest(0, r.hits - ${max})), ${MAX_BACKOFF_MS}::double precision) * interval '1 millisecond')`;
      const row = await sql<{ hits: number; ttl: number }>`
        insert into rate_limit_hits as r (key, hits, reset_at)
        values (${key}, 1, now() + ${window})
        on conflict (key) do update set
          hits = case when r.reset_at <= now() then 1 else r.hits + 1 end,
          reset_at = case
            when r.reset_at <= now() then now() + ${window}
            when ${backoff} and r.hits + 1 > ${max} then now() + ${grown}
            else r.reset_at
          end
        returning hits, greatest(0, ceil(extract(epoch from (reset_at - now())) * 1000))::float8 as ttl
      `.execute(db);
      const r = row.rows[0];
      return { current: Number(r.hits), ttl: Number(r.ttl) };
    },

    /** The state of `key` without counting (a key whose window ended reads as 0 hits). */
    async read(key: string): Promise<HitState> {
      const r = await db
        .selectFrom('rate_limit_hits')
        .select([
          'hits',
          sql<number>`greatest(0, ceil(extract(epoch from (reset_at - now())) * 1000))::float8`.as('ttl'),
        ])
        .where('key', '=', key)
        .where('reset_at', '>', sql<Date>`now()`)
        .executeTakeFirst();
      return r ? { current: Number(r.hits), ttl: Number(r.ttl) } : { current: 0, ttl: 0 };
    },

    /** Forget `key` (a login that succeeded clears its account's failures). */
    async clear(key: string): Promise<void> {
      await db.deleteFrom('rate_limit_hits').where('key', '=', key).execute();
    },

    /** Drop keys whose window ended more than a minute ago. @returns how many. */
    async purge(): Promise<number> {
      const r = await db
        .deleteFrom('rate_limit_hits')
        .where('reset_at', '<', sql<Date>`now() - interval '1 minute'`)
        .executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
}

export type ThrottleRepo = ReturnType<typeof createThrottleRepo>;
