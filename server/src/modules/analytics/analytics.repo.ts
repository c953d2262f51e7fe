/**
 * SQL of the admin analytics: a reporting repository that reads other areas' tables (agent runs, token
 * usage) for figures computed in SQL, and writes none. Activity-log counts come from `lib/activity.ts`.
 */
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/types.ts';

/** The latency stages of a run, in ms (see runtime-analytics.service.ts). */
export const STAGES = ['queue_ms', 'prep_ms', 'gen_ms', 'total_ms'] as const;
export type Stage = (typeof STAGES)[number];

/** The analytics repository (see the module header): reads only. */
export function createAnalyticsRepo(db: Kysely<DB>) {
  return {
    /**
     * Succeeded runs finished since `since`: their number (`sample`) and per stage the nearest-rank p50 and
     * p90 (`percentile_disc`) and the number of runs with a value (`<stage>_p50`, `<stage>_p90`, `<stage>_n`).
     */
    async latency(since: Date): Promise<Record<string, number | null> | undefined> {
      const stage = (c: Stage) => [
        sql<number | null>`percentile_disc(0.5) within group (order by ${sql.ref(c)})`.as(`${c}_p50`),
        sql<number | null>`percentile_disc(0.9) within group (order by ${sql.ref(c)})`.as(`${c}_p90`),
        sql<number>`count(${sql.ref(c)})::int`.as(`${c}_n`),
      ];
      return (await db
        .selectFrom('agent_runs')
        .select([sql<number>`count(*)::int`.as('sample'), ...STAGES.flatMap(stage)])
        .where('status', '=', 'succeeded')
        .where('finished_at', '>=', since)
        .executeTakeFirst()) as Record<string, number | null> | undefined;
    },

    /**
     * Per model, the model calls (`turns`: usage rows) and tokens since `since` of runs with a cascade, most
     * calls first.
     */
    cascadeByModel: (since: Date) =>
      db
        .selectFrom('token_usage')
        .innerJoin('agent_runs', 'agent_runs.id', 'token_usage.run_id')
        .select([
          'token_usage.model',
          sql<number>`count(*)::int`.as('turns'),
          sql<number>`coalesce(sum(token_usage.total_tokens), 0)::int`.as('total_tokens'),
        ])
        .where('agent_runs.cascade', '=', true)
        .where('token_usage.created_at', '>=', since)
        .groupBy('token_usage.model')
        .orderBy('turns', 'desc')
        .execute(),
  };
}

export type AnalyticsRepo = ReturnType<typeof createAnalyticsRepo>;
