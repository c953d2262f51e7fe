/** API shapes of the admin product analytics (docs/ARCHITECTURE.md, Admin analytics). */
import { Type } from 'typebox';
import { DateTime, Nullable } from '../../http/schemas.ts';

const Int = Type.Integer();
const NInt = Nullable(Type.Integer());
const NNum = Nullable(Type.Number());

export const OnboardingFunnel = Type.Object({
  hours: Int,
  total_steps: Int,
  started_users: Int,
  completed_users: Int,
  completion_rate: Type.Number({ description: 'completed_users / started_users (0–1)' }),
  per_step: Type.Array(Type.Object({ step: Type.String(), completed: Int, skipped: Int })),
  duration_p50_ms: NInt,
  duration_p90_ms: NInt,
  ttfc_p50_ms: Nullable(Type.Integer({ description: 'start → first completed step, nearest-rank median' })),
  ttfc_sample_size: Int,
});

const FunnelStep = Type.Object({
  key: Type.String(),
  count: Int,
  pctOfCohort: Type.Number(),
  pctOfPrev: Type.Number(),
  medianSecondsFromPrev: NInt,
});

export const LifecycleFunnel = Type.Object({
  windowDays: Int,
  cohortSize: Int,
  steps: Type.Array(FunnelStep),
  segments: Type.Record(Type.String(), Type.Object({ cohort: Int, steps: Type.Array(FunnelStep) }), {
    description: '`web`, `tg` (messenger), `cli`: every user of the cohort is in exactly one',
  }),
  acceptance: Type.Object({ medianSignupToFirstResponseSec: NInt, targetSec: Int, sampleSize: Int }),
});

export const WizardMetrics = Type.Object({
  hours: Int,
  starts: Int,
  completions: Int,
  abandons: Int,
  success_rate: Type.Number({ description: 'completions / starts (0–1)' }),
  avg_duration_ms_completed: NNum,
  avg_attempts_completed: NNum,
  by_action: Type.Record(Type.String(), Int),
});

export const WizardBody = Type.Object(
  {
    action: Type.String({
      minLength: 1,
      maxLength: 64,
      description: '`start`, `complete`, `abandon`, `locale_active`, `locale_switch`, or another step name',
    }),
    duration_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400_000 })),
    attempts: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
    success: Type.Optional(Type.Boolean()),
    project: Type.Optional(Type.String({ maxLength: 100 })),
    worker_id: Type.Optional(Type.Integer({ minimum: 1 })),
    locale: Type.Optional(Type.String({ maxLength: 20 })),
  },
  { additionalProperties: false },
);

export const PhaseBody = Type.Object(
  {
    phase: Type.String({
      minLength: 1,
      maxLength: 64,
      pattern: '^[a-z0-9_.-]+$',
      description: 'the phase measured (lowercase word); `wipe_render` and `wipe_interaction` feed the wipe metrics',
    }),
    duration_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400_000 })),
    session_id: Type.Optional(Type.String({ maxLength: 100 })),
    worker_id: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);

export const Phases = Type.Object({
  hours: Int,
  phases: Type.Array(Type.Object({ phase: Type.String(), count: Int, p50_ms: NInt, p90_ms: NInt, max_ms: NInt })),
});

export const Activity = Type.Object({
  windowDays: Int,
  daily: Type.Array(Type.Object({ date: Type.String(), events: Int, active_users: Int })),
  byType: Type.Array(Type.Object({ type: Type.String(), n: Int })),
});

export const Sidebar = Type.Object({
  users_total: Int,
  users_new_7d: Int,
  projects_total: Int,
  projects_new_7d: Int,
  workers_total: Int,
  issues_total: Int,
  runs_running: Int,
  runs_queued: Int,
  waitlist_open: Int,
});

export const WipeMetrics = Type.Object({
  windowDays: Int,
  render: Type.Object({ count: Int, avg_ms: NNum, p50_ms: NInt, p95_ms: NInt, max_ms: NInt }),
  interaction: Type.Object({
    count: Int,
    avg_per_session: Type.Number(),
    p95_per_session: NInt,
    max_per_session: NInt,
    sessions_zero: Int,
  }),
  by_worker: Type.Array(
    Type.Object({
      worker_id: NInt,
      render_count: Int,
      avg_render_ms: NNum,
      session_count: Int,
      avg_interactions: Type.Number(),
    }),
  ),
  daily: Type.Array(Type.Object({ date: Type.String(), renders: Int, interactions: Int, avg_render_ms: NNum })),
  recent: Type.Array(
    Type.Object({
      phase: Type.String(),
      duration_ms: NInt,
      session_id: Nullable(Type.String()),
      worker_id: NInt,
      created_at: DateTime(),
    }),
  ),
});

const Counts = Type.Record(Type.String(), Type.Number());

export const Dashboard = Type.Object({
  cpu: Type.Object({ cores: Int, load_avg: Type.Array(Type.Number(), { description: '1, 5 and 15 minutes' }) }),
  memory: Type.Object({
    total_bytes: Int,
    free_bytes: Int,
    process_rss_bytes: Int,
    process_heap_used_bytes: Int,
  }),
  disk: Nullable(Type.Object({ total_bytes: Int, free_bytes: Int, used_pct: Type.Number() })),
  users: Type.Object({ total: Int, new_7d: Int, per_plan: Counts }),
  containers: Counts,
  waitlist: Type.Object({ beta: Counts, cloud: Counts }),
  projects: Type.Object({ total: Int, new_7d: Int, workers: Int }),
  issues: Type.Object({ total: Int, per_status: Counts }),
  runs: Type.Object({ running: Int, queued: Int }),
  recent_events: Type.Array(
    Type.Object({
      id: Int,
      type: Type.String(),
      actor: Nullable(Type.String()),
      project_id: NInt,
      worker_id: NInt,
      title: Nullable(Type.String()),
      created_at: DateTime(),
    }),
  ),
});
