/**
 * Admin analytics computed from what agent runs recorded (docs/ARCHITECTURE.md, Admin analytics).
 *  - response latency: per succeeded run finished in the window, the stages `queue_ms` (queued → claimed),
 *    `prep_ms` (claimed → first model call: context, key, budget), `gen_ms` (the agent loop: model calls
 *    and tools) and `total_ms` (message stored → run finished); nearest-rank p50/p90 (`percentile_disc`).
 *  - cascade: `cascade_applied` / `cascade_escalated` events in the window, escalations by failure class,
 *    and per model the model calls (`turns`) and tokens of cascade runs (token_usage rows of runs with `cascade`).
 */
import { requireAdmin } from '../../access/access.ts';
import type { Actor } from '../../http/auth.ts';
import type { ActivityLog } from '../../lib/activity.ts';
import { type AnalyticsRepo, STAGES, type Stage } from './analytics.repo.ts';

/** Nearest-rank percentile of sorted-or-not numbers (`p` in 0–100); null for none. */
export function nearestRank(values: number[], p: number): number | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** What the analytics service uses. */
export interface AnalyticsDeps {
  repo: AnalyticsRepo;
  /** Cascade events counted by failure class. */
  activity: Pick<ActivityLog, 'countByPayload'>;
}

/** The admin analytics (module header); every method needs an admin (403 `admin_required`). */
export function createRuntimeAnalytics(deps: AnalyticsDeps) {
  const { repo } = deps;
  const since = (days: number) => new Date(Date.now() - days * 86_400_000);
  return {
    /** `GET /analytics/response-latency?days=` (1–90, default 7). */
    async responseLatency(actor: Actor, days: number) {
      requireAdmin(actor);
      const row = await repo.latency(since(days));
      const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
      return {
        windowDays: days,
        sampleSize: Number(row?.sample ?? 0),
        stages: Object.fromEntries(
          STAGES.map((c) => [
            c,
            { p50: num(row?.[`${c}_p50`]), p90: num(row?.[`${c}_p90`]), n: Number(row?.[`${c}_n`] ?? 0) },
          ]),
        ) as Record<Stage, { p50: number | null; p90: number | null; n: number }>,
      };
    },

    /** `GET /analytics/cascade?days=` (1–90, default 14). */
    async cascade(actor: Actor, days: number) {
      requireAdmin(actor);
      const from = since(days);
      const events = await deps.activity.countByPayload(['cascade_applied', 'cascade_escalated'], 'class', from);
      const byModel = await repo.cascadeByModel(from);
      const escalationReasons: Record<string, number> = {};
      for (const e of events)
        if (e.type === 'cascade_escalated')
          escalationReasons[e.value ?? 'unknown'] = (escalationReasons[e.value ?? 'unknown'] ?? 0) + Number(e.n);
      return {
        windowDays: days,
        applied: events.filter((e) => e.type === 'cascade_applied').reduce((a, e) => a + Number(e.n), 0),
        escalated: Object.values(escalationReasons).reduce((a, n) => a + n, 0),
        escalationReasons,
        byModel: byModel.map((m) => ({
          model: m.model ?? 'unknown',
          turns: Number(m.turns),
          total_tokens: Number(m.total_tokens),
        })),
      };
    },
  };
}

export type RuntimeAnalytics = ReturnType<typeof createRuntimeAnalytics>;
