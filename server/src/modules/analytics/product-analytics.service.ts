/**
 * Admin product analytics (docs/ARCHITECTURE.md, Admin analytics): the onboarding funnel, the lifecycle funnel, wizard
 * metrics, activity, sidebar counts, client phase timings, wipe metrics and the admin dashboard; plus the two
 * writes any user makes (`POST /metrics/wizard`, `POST /analytics/phases`), best effort, as activity events.
 *
 * Every figure is computed in SQL by the reporting repository (analytics.repo.ts) over indexed columns;
 * percentiles are nearest-rank (`percentile_disc`). Windows: onboarding `hours` 1–720 (168), lifecycle
 * `days` 1–365 (30) — refused outside by the routes —, wizard `hours` clamped to 1–720 (168).
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import { requireAdmin } from '../../access/access.ts';
import type { Actor } from '../../http/auth.ts';
import type { ActivityLog } from '../../lib/activity.ts';
import type { AnalyticsRepo } from './analytics.repo.ts';

/** The onboarding checklist's steps, in order. */
export const ONBOARDING_STEPS = ['workers', 'cli', 'skill', 'bot', 'issue'] as const;
/** The lifecycle funnel's steps, in order. */
export const LIFECYCLE_STEPS = [
  'signup',
  'email_verified',
  'first_project',
  'first_worker',
  'first_message',
  'first_response',
  'return_day2',
] as const;
export const SEGMENTS = ['web', 'tg', 'cli'] as const;
/** The acceptance target: median seconds from signup to the first answer of a worker. */
export const ACCEPTANCE_TARGET_SEC = 600;

/** Clamp a window to `[min, max]` (an integer). */
export const clamp = (v: number, min: number, max: number) => Math.min(max, Math.max(min, Math.trunc(v)));
/** `part / whole` rounded to 4 decimals; 0 when `whole` is 0. */
export const ratio = (part: number, whole: number) => (whole ? Math.round((part / whole) * 10_000) / 10_000 : 0);
/** `part / whole` in percent with one decimal; 0 when `whole` is 0. */
export const percent = (part: number, whole: number) => (whole ? Math.round((part / whole) * 1000) / 10 : 0);

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/** The container fleet (the cloud area's service). */
export interface FleetPort {
  fleetStats(): Promise<{ total: number; running: number; paused: number; stopped: number; [k: string]: number }>;
  waitlistStats(): Promise<Record<string, number>>;
}

export interface ProductAnalyticsDeps {
  repo: AnalyticsRepo;
  activity: Pick<ActivityLog, 'recordBestEffort'>;
  fleet: FleetPort;
  /** The data directory (its file system's free space on the dashboard). */
  dataDir: string;
}

export function createProductAnalytics(deps: ProductAnalyticsDeps) {
  const { repo } = deps;
  const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000);
  const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000);

  /** One segment's (or everyone's) funnel. */
  async function funnel(since: Date, segment?: (typeof SEGMENTS)[number]) {
    const r = await repo.lifecycle(since, segment);
    const n = (k: string) => Number(r[`${k}_n`] ?? 0);
    const cohort = n('signup');
    const steps = LIFECYCLE_STEPS.map((key, i) => ({
      key,
      count: n(key),
      pctOfCohort: percent(n(key), cohort),
      pctOfPrev: i === 0 ? 100 : percent(n(key), n(LIFECYCLE_STEPS[i - 1])),
      medianSecondsFromPrev: i === 0 ? null : num(r[`${key}_med`]),
    }));
    return { cohort, steps, s2r: { med: num(r.s2r_med), n: Number(r.s2r_n ?? 0) } };
  }

  return {
    /** `GET /analytics/onboarding-funnel?hours=` (1–720, default 168). */
    async onboardingFunnel(actor: Actor, hours: number) {
      requireAdmin(actor);
      const r = await repo.onboardingFunnel(hoursAgo(hours), ONBOARDING_STEPS);
      const started = Number(r.started ?? 0);
      const completed = Number(r.completed ?? 0);
      return {
        hours,
        total_steps: ONBOARDING_STEPS.length,
        started_users: started,
        completed_users: completed,
        completion_rate: ratio(completed, started),
        per_step: ONBOARDING_STEPS.map((step) => ({
          step,
          completed: Number(r[`${step}_completed`] ?? 0),
          skipped: Number(r[`${step}_skipped`] ?? 0),
        })),
        duration_p50_ms: num(r.dur_p50),
        duration_p90_ms: num(r.dur_p90),
        ttfc_p50_ms: num(r.ttfc_p50),
        ttfc_sample_size: Number(r.ttfc_n ?? 0),
      };
    },

    /** `GET /analytics/lifecycle-funnel?days=` (1–365, default 30). */
    async lifecycleFunnel(actor: Actor, days: number) {
      requireAdmin(actor);
      const since = daysAgo(days);
      const all = await funnel(since);
      const segments: Record<string, { cohort: number; steps: typeof all.steps }> = {};
      for (const s of SEGMENTS) {
        const f = await funnel(since, s);
        segments[s] = { cohort: f.cohort, steps: f.steps };
      }
      return {
        windowDays: days,
        cohortSize: all.cohort,
        steps: all.steps,
        segments,
        acceptance: {
          medianSignupToFirstResponseSec: all.s2r.med,
          targetSec: ACCEPTANCE_TARGET_SEC,
          sampleSize: all.s2r.n,
        },
      };
    },

    /** `GET /analytics/wizard-metrics?hours=` (clamped to 1–720, default 168). */
    async wizardMetrics(actor: Actor, hoursIn: number) {
      requireAdmin(actor);
      const hours = clamp(hoursIn, 1, 720);
      const { totals, byAction } = await repo.wizard(hoursAgo(hours));
      const starts = Number(totals.starts ?? 0);
      const completions = Number(totals.completions ?? 0);
      return {
        hours,
        starts,
        completions,
        abandons: Number(totals.abandons ?? 0),
        success_rate: ratio(completions, starts),
        avg_duration_ms_completed: num(totals.avg_duration),
        avg_attempts_completed:
          totals.avg_attempts === null ? null : Math.round(Number(totals.avg_attempts) * 100) / 100,
        by_action: Object.fromEntries(byAction.map((a) => [a.action ?? 'unknown', Number(a.n)])),
      };
    },

    /** `POST /metrics/wizard`: one `wizard_metric` event, best effort (a failed write is logged, not reported). */
    async recordWizard(
      actor: Actor,
      body: {
        action: string;
        duration_ms?: number;
        attempts?: number;
        success?: boolean;
        project?: string;
        worker_id?: number;
        locale?: string;
      },
    ) {
      await deps.activity.recordBestEffort({
        type: 'wizard_metric',
        userId: actor.id,
        actor: actor.email,
        workerId: null,
        title: body.action,
        payload: { ...body },
      });
      return { ok: true as const };
    },

    /** `POST /analytics/phases`: one `phase_timing` event (a client phase and its duration), best effort. */
    async recordPhase(
      actor: Actor,
      body: { phase: string; duration_ms?: number; session_id?: string; worker_id?: number },
    ) {
      requireAdmin(actor);
      await deps.activity.recordBestEffort({
        type: 'phase_timing',
        userId: actor.id,
        actor: actor.email,
        workerId: body.worker_id ?? null,
        title: body.phase,
        payload: { ...body },
      });
      return { ok: true as const };
    },

    /** `GET /analytics/phases?hours=` (1–720, default 168): per phase the count and p50/p90/max ms. */
    async phases(actor: Actor, hours: number) {
      requireAdmin(actor);
      const rows = await repo.phases(hoursAgo(hours));
      return {
        hours,
        phases: rows.map((r) => ({
          phase: r.phase,
          count: Number(r.count),
          p50_ms: num(r.p50_ms),
          p90_ms: num(r.p90_ms),
          max_ms: num(r.max_ms),
        })),
      };
    },

    /** `GET /analytics/activity?days=` (1–90, default 14): events and active users per day, events per type. */
    async activity(actor: Actor, days: number) {
      requireAdmin(actor);
      const r = await repo.activity(daysAgo(days));
      return {
        windowDays: days,
        daily: r.daily.map((d) => ({ date: d.date, events: Number(d.events), active_users: Number(d.active_users) })),
        byType: r.byType.map((t) => ({ type: t.type, n: Number(t.n) })),
      };
    },

    /** `GET /analytics/sidebar`: the counts the admin navigation shows. */
    async sidebar(actor: Actor) {
      requireAdmin(actor);
      const p = await repo.platform(daysAgo(7));
      return {
        users_total: Number(p.users_total),
        users_new_7d: Number(p.users_new_7d),
        projects_total: Number(p.projects_total),
        projects_new_7d: Number(p.projects_new_7d),
        workers_total: Number(p.workers_total),
        issues_total: Number(p.issues_total),
        runs_running: Number(p.runs_running),
        runs_queued: Number(p.runs_queued),
        waitlist_open: Number(p.waitlist_open),
      };
    },

    /** `GET /admin/wipe-metrics?days=` (1–90, default 7). */
    async wipeMetrics(actor: Actor, days: number) {
      requireAdmin(actor);
      const w = await repo.wipe(daysAgo(days));
      return {
        windowDays: days,
        render: {
          count: Number(w.render.count ?? 0),
          avg_ms: num(w.render.avg_ms),
          p50_ms: num(w.render.p50_ms),
          p95_ms: num(w.render.p95_ms),
          max_ms: num(w.render.max_ms),
        },
        interaction: {
          count: Number(w.interaction.count ?? 0),
          avg_per_session: Math.round(Number(w.interaction.avg_per_session ?? 0) * 100) / 100,
          p95_per_session: num(w.interaction.p95_per_session),
          max_per_session: num(w.interaction.max_per_session),
          sessions_zero: Number(w.interaction.sessions_zero ?? 0),
        },
        by_worker: w.byWorker.map((b) => ({
          worker_id: num(b.worker_id),
          render_count: Number(b.render_count ?? 0),
          avg_render_ms: num(b.avg_render_ms),
          session_count: Number(b.session_count ?? 0),
          avg_interactions: Math.round(Number(b.avg_interactions ?? 0) * 100) / 100,
        })),
        daily: w.daily.map((d) => ({
          date: String(d.date),
          renders: Number(d.renders),
          interactions: Number(d.interactions),
          avg_render_ms: num(d.avg_render_ms),
        })),
        recent: w.recent.map((r) => ({
          phase: String(r.phase),
          duration_ms: num(r.duration_ms),
          session_id: (r.session_id as string | null) ?? null,
          worker_id: num(r.worker_id),
          created_at: r.created_at as Date,
        })),
      };
    },

    /**
     * `GET /admin/dashboard`: this instance's CPU, memory and the data directory's disk; users per plan; the
     * container fleet and waitlists; the last 50 activity events; project and issue statistics.
     */
    async dashboard(actor: Actor) {
      requireAdmin(actor);
      const [platform, plans, issues, waitlist, events, fleet, cloudWaitlist] = await Promise.all([
        repo.platform(daysAgo(7)),
        repo.usersPerPlan(),
        repo.issuesPerStatus(),
        repo.waitlistPerStatus(),
        repo.recentEvents(50),
        deps.fleet.fleetStats(),
        deps.fleet.waitlistStats(),
      ]);
      let disk: { total_bytes: number; free_bytes: number; used_pct: number } | null;
      try {
        const s = await fsp.statfs(deps.dataDir);
        const total = s.blocks * s.bsize;
        const free = s.bavail * s.bsize;
        disk = { total_bytes: total, free_bytes: free, used_pct: percent(total - free, total) };
      } catch {
        disk = null;
      }
      const mem = process.memoryUsage();
      return {
        cpu: { cores: os.cpus().length, load_avg: os.loadavg().map((l) => Math.round(l * 100) / 100) },
        memory: {
          total_bytes: os.totalmem(),
          free_bytes: os.freemem(),
          process_rss_bytes: mem.rss,
          process_heap_used_bytes: mem.heapUsed,
        },
        disk,
        users: {
          total: Number(platform.users_total),
          new_7d: Number(platform.users_new_7d),
          per_plan: Object.fromEntries(plans.map((p) => [p.plan, Number(p.users)])),
        },
        containers: fleet,
        waitlist: {
          beta: Object.fromEntries(waitlist.map((w) => [w.status, Number(w.n)])),
          cloud: cloudWaitlist,
        },
        projects: {
          total: Number(platform.projects_total),
          new_7d: Number(platform.projects_new_7d),
          workers: Number(platform.workers_total),
        },
        issues: {
          total: Number(platform.issues_total),
          per_status: Object.fromEntries(issues.map((i) => [i.status, Number(i.n)])),
        },
        runs: { running: Number(platform.runs_running), queued: Number(platform.runs_queued) },
        recent_events: events,
      };
    },
  };
}

export type ProductAnalytics = ReturnType<typeof createProductAnalytics>;
