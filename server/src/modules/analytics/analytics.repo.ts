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

    // Product analytics: onboarding, lifecycle, wizard, phases, the admin dashboard.

    /**
     * The onboarding cohort: users whose progress started since `since`. Per step of `steps` the completed and
     * skipped counts; how many completed all; nearest-rank p50/p90 of the duration (started → completed, ms);
     * the p50 of the time from start to the first completed step (`onboarding_step_completed`) and its sample.
     */
    async onboardingFunnel(since: Date, steps: readonly string[]) {
      const perStep = steps.flatMap((st) => [
        sql<number>`count(*) filter (where o.state->>${sql.lit(st)} = 'completed')::int`.as(`${st}_completed`),
        sql<number>`count(*) filter (where o.state->>${sql.lit(st)} = 'skipped')::int`.as(`${st}_skipped`),
      ]);
      const dur = sql`extract(epoch from (o.completed_at - o.started_at)) * 1000`;
      const ttfc = sql`extract(epoch from (
        (select min(a.created_at) from activity_log a
          where a.user_id = o.user_id and a.type = 'onboarding_step_completed' and a.created_at >= o.started_at)
        - o.started_at)) * 1000`;
      return (await db
        .selectFrom('onboarding_progress as o')
        .select([
          sql<number>`count(*)::int`.as('started'),
          sql<number>`count(o.completed_at)::int`.as('completed'),
          sql<number | null>`percentile_disc(0.5) within group (order by (${dur})::bigint)`.as('dur_p50'),
          sql<number | null>`percentile_disc(0.9) within group (order by (${dur})::bigint)`.as('dur_p90'),
          sql<number | null>`percentile_disc(0.5) within group (order by (${ttfc})::bigint)`.as('ttfc_p50'),
          sql<number>`count((${ttfc}))::int`.as('ttfc_n'),
          ...perStep,
        ])
        .where('o.started_at', '>=', since)
        .executeTakeFirstOrThrow()) as Record<string, number | null>;
    },

    /**
     * The lifecycle funnel of users who signed up since `since` (optionally one segment: `cli` — a
     * `cli_invocation` event —, else `tg` — a `messenger_message` event —, else `web`). Steps are strict: a
     * user reaches a step when it reached the previous one and the step happened. Per step the count
     * (`<key>_n`) and the nearest-rank median seconds from the previous step (`<key>_med`); `s2r_med`,
     * `s2r_n`: signup → first response.
     */
    async lifecycle(since: Date, segment?: 'web' | 'tg' | 'cli') {
      const q = sql<Record<string, number | null>>`
        with u as (
          select usr.id, usr.created_at as signup,
            coalesce(
              (select min(t.used_at) from email_tokens t where t.user_id = usr.id and t.kind = 'verify'),
              case when usr.email_verified then usr.created_at end) as email_verified,
            (select min(p.created_at) from projects p where p.owner_id = usr.id) as first_project,
            (select min(w.created_at) from workers w join projects p on p.id = w.project_id
              where p.owner_id = usr.id) as first_worker,
            (select min(m.created_at) from chat_messages m where m.user_id = usr.id and m.role = 'user') as first_message,
            (select min(r.finished_at) from agent_runs r where r.user_id = usr.id and r.status = 'succeeded')
              as first_response,
            (select min(x.at) from (
                select e.created_at as at from auth_events e
                  where e.user_id = usr.id and e.type = 'login' and e.created_at >= usr.created_at + interval '1 day'
                union all
                select m.created_at from chat_messages m
                  where m.user_id = usr.id and m.created_at >= usr.created_at + interval '1 day'
                union all
                select a.created_at from activity_log a
                  where a.user_id = usr.id and a.created_at >= usr.created_at + interval '1 day') x) as return_day2,
            case
              when exists (select 1 from activity_log a where a.user_id = usr.id and a.type = 'cli_invocation') then 'cli'
              when exists (select 1 from activity_log a where a.user_id = usr.id and a.type = 'messenger_message') then 'tg'
              else 'web' end as segment
          from users usr where usr.created_at >= ${since}
        ), s as (
          select u.*,
            email_verified is not null as r1,
            email_verified is not null and first_project is not null as r2,
            email_verified is not null and first_project is not null and first_worker is not null as r3,
            email_verified is not null and first_project is not null and first_worker is not null
              and first_message is not null as r4,
            email_verified is not null and first_project is not null and first_worker is not null
              and first_message is not null and first_response is not null as r5,
            email_verified is not null and first_project is not null and first_worker is not null
              and first_message is not null and first_response is not null and return_day2 is not null as r6
          from u ${segment ? sql`where u.segment = ${segment}` : sql``}
        )
        select count(*)::int as signup_n,
          count(*) filter (where r1)::int as email_verified_n,
          count(*) filter (where r2)::int as first_project_n,
          count(*) filter (where r3)::int as first_worker_n,
          count(*) filter (where r4)::int as first_message_n,
          count(*) filter (where r5)::int as first_response_n,
          count(*) filter (where r6)::int as return_day2_n,
          percentile_disc(0.5) within group (order by extract(epoch from email_verified - signup)::bigint)
            filter (where r1) as email_verified_med,
          percentile_disc(0.5) within group (order by extract(epoch from first_project - email_verified)::bigint)
            filter (where r2) as first_project_med,
          percentile_disc(0.5) within group (order by extract(epoch from first_worker - first_project)::bigint)
            filter (where r3) as first_worker_med,
          percentile_disc(0.5) within group (order by extract(epoch from first_message - first_worker)::bigint)
            filter (where r4) as first_message_med,
          percentile_disc(0.5) within group (order by extract(epoch from first_response - first_message)::bigint)
            filter (where r5) as first_response_med,
          percentile_disc(0.5) within group (order by extract(epoch from return_day2 - first_response)::bigint)
            filter (where r6) as return_day2_med,
          percentile_disc(0.5) within group (order by extract(epoch from first_response - signup)::bigint)
            filter (where first_response is not null) as s2r_med,
          count(first_response)::int as s2r_n
        from s`;
      return (await q.execute(db)).rows[0];
    },

    /**
     * `wizard_metric` events since `since`: starts, completions, abandons (by payload `action`), the mean
     * duration and attempts of completions, and the count per action.
     */
    async wizard(since: Date) {
      const totals = await sql<Record<string, number | null>>`
        select
          count(*) filter (where payload->>'action' = 'start')::int as starts,
          count(*) filter (where payload->>'action' = 'complete')::int as completions,
          count(*) filter (where payload->>'action' = 'abandon')::int as abandons,
          round(avg((payload->>'duration_ms')::numeric) filter (where payload->>'action' = 'complete'
            and jsonb_typeof(payload->'duration_ms') = 'number'))::float8 as avg_duration,
          (avg((payload->>'attempts')::numeric) filter (where payload->>'action' = 'complete'
            and jsonb_typeof(payload->'attempts') = 'number'))::float8 as avg_attempts
        from activity_log where type = 'wizard_metric' and created_at >= ${since}`.execute(db);
      const byAction = await sql<{ action: string; n: number }>`
        select payload->>'action' as action, count(*)::int as n from activity_log
        where type = 'wizard_metric' and created_at >= ${since}
        group by payload->>'action' order by n desc, action`.execute(db);
      return { totals: totals.rows[0], byAction: byAction.rows };
    },

    /**
     * `phase_timing` events since `since` by phase: count and nearest-rank p50/p90 and max of `duration_ms`.
     */
    phases: (since: Date) =>
      sql<{ phase: string; count: number; p50_ms: number | null; p90_ms: number | null; max_ms: number | null }>`
        select payload->>'phase' as phase, count(*)::int as count,
          percentile_disc(0.5) within group (order by (payload->>'duration_ms')::bigint) as p50_ms,
          percentile_disc(0.9) within group (order by (payload->>'duration_ms')::bigint) as p90_ms,
          max((payload->>'duration_ms')::bigint) as max_ms
        from activity_log where type = 'phase_timing' and created_at >= ${since}
        group by payload->>'phase' order by phase`
        .execute(db)
        .then((r) => r.rows),

    /**
     * Wipe figures from `phase_timing` events since `since`: phase `wipe_render` (a render, `duration_ms`) and
     * `wipe_interaction` (one interaction), each with `session_id` and `worker_id`.
     */
    async wipe(since: Date) {
      const base = sql`
        select payload->>'phase' as phase, (payload->>'duration_ms')::bigint as ms,
          payload->>'session_id' as session_id, worker_id, created_at
        from activity_log where type = 'phase_timing' and created_at >= ${since}
          and payload->>'phase' in ('wipe_render', 'wipe_interaction')`;
      const render = await sql<Record<string, number | null>>`
        with e as (${base})
        select count(*)::int as count, round(avg(ms))::float8 as avg_ms,
          percentile_disc(0.5) within group (order by ms) as p50_ms,
          percentile_disc(0.95) within group (order by ms) as p95_ms, max(ms) as max_ms
        from e where phase = 'wipe_render'`.execute(db);
      const interaction = await sql<Record<string, number | null>>`
        with e as (${base}), s as (
          select session_id, count(*) filter (where phase = 'wipe_interaction')::int as n
          from e where session_id is not null group by session_id)
        select coalesce(sum(n), 0)::int as count, coalesce(avg(n), 0)::float8 as avg_per_session,
          percentile_disc(0.95) within group (order by n) as p95_per_session, max(n) as max_per_session,
          count(*) filter (where n = 0)::int as sessions_zero
        from s`.execute(db);
      const byWorker = await sql<Record<string, number | null>>`
        with e as (${base}), s as (
          select worker_id, session_id, count(*) filter (where phase = 'wipe_interaction')::int as n
          from e where session_id is not null group by worker_id, session_id)
        select w.worker_id, w.render_count, w.avg_render_ms,
          (select count(*)::int from s where s.worker_id is not distinct from w.worker_id) as session_count,
          (select coalesce(avg(n), 0)::float8 from s where s.worker_id is not distinct from w.worker_id)
            as avg_interactions
        from (select worker_id, count(*) filter (where phase = 'wipe_render')::int as render_count,
                round(avg(ms) filter (where phase = 'wipe_render'))::float8 as avg_render_ms
              from e group by worker_id) w
        order by w.render_count desc, w.worker_id`.execute(db);
      const daily = await sql<Record<string, number | string | null>>`
        with e as (${base})
        select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as date,
          count(*) filter (where phase = 'wipe_render')::int as renders,
          count(*) filter (where phase = 'wipe_interaction')::int as interactions,
          round(avg(ms) filter (where phase = 'wipe_render'))::float8 as avg_render_ms
        from e group by 1 order by 1`.execute(db);
      const recent = await sql<Record<string, unknown>>`
        with e as (${base})
        select phase, ms as duration_ms, session_id, worker_id, created_at from e
        order by created_at desc limit 50`.execute(db);
      return {
        render: render.rows[0],
        interaction: interaction.rows[0],
        byWorker: byWorker.rows,
        daily: daily.rows,
        recent: recent.rows,
      };
    },

    /** Events per UTC day since `since` (events and distinct users), and per type. */
    async activity(since: Date) {
      const daily = await sql<{ date: string; events: number; active_users: number }>`
        select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as date, count(*)::int as events,
          count(distinct user_id)::int as active_users
        from activity_log where created_at >= ${since} group by 1 order by 1`.execute(db);
      const byType = await sql<{ type: string; n: number }>`
        select type, count(*)::int as n from activity_log where created_at >= ${since}
        group by type order by n desc, type`.execute(db);
      return { daily: daily.rows, byType: byType.rows };
    },

    /** Platform counts for the admin dashboard and sidebar. */
    async platform(since7d: Date) {
      const r = await sql<Record<string, number>>`
        select
          (select count(*)::int from users) as users_total,
          (select count(*)::int from users where created_at >= ${since7d}) as users_new_7d,
          (select count(*)::int from projects) as projects_total,
          (select count(*)::int from projects where created_at >= ${since7d}) as projects_new_7d,
          (select count(*)::int from workers) as workers_total,
          (select count(*)::int from issues) as issues_total,
          (select count(*)::int from agent_runs where status = 'running') as runs_running,
          (select count(*)::int from agent_runs where status = 'queued') as runs_queued,
          (select count(*)::int from beta_waitlist where status = 'open') as waitlist_open`.execute(db);
      return r.rows[0];
    },

    /** Users per plan. */
    usersPerPlan: () =>
      sql<{ plan: string; users: number }>`
        select plan, count(*)::int as users from users group by plan order by plan`
        .execute(db)
        .then((r) => r.rows),

    /** Issues per status. */
    issuesPerStatus: () =>
      sql<{ status: string; n: number }>`select status, count(*)::int as n from issues group by status order by status`
        .execute(db)
        .then((r) => r.rows),

    /** Beta waitlist applications per status. */
    waitlistPerStatus: () =>
      sql<{ status: string; n: number }>`select status, count(*)::int as n from beta_waitlist group by status`
        .execute(db)
        .then((r) => r.rows),

    /** The newest `limit` activity events of the platform. */
    recentEvents: (limit: number) =>
      db
        .selectFrom('activity_log')
        .select(['id', 'type', 'actor', 'project_id', 'worker_id', 'title', 'created_at'])
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute(),
  };
}

export type AnalyticsRepo = ReturnType<typeof createAnalyticsRepo>;
