/**
 * Health and readiness (`GET /healthz`, `GET /readyz`; docs/operations.md, Health and readiness). Ready means the
 * database answers and no migration is pending. Dependencies the service can run without are reported in `checks`
 * (`ok` or `degraded`, `off` when not configured) without making it unready: the breached-password range
 * API (passwords are accepted unchecked while it is down). The optional tools of the machine (ffmpeg, ffprobe,
 * bubblewrap, git, yt-dlp, Docker) are listed in `capabilities`, present or missing with what that costs.
 */
import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/database.ts';
import { migrationsApplied } from '../../db/migrate.ts';
import type { DB } from '../../db/types.ts';
import type { Capabilities, Capability } from '../../lib/capabilities.ts';
import type { Metrics } from '../../lib/metrics.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { Unauthorized, Upstream } from '../../http/errors.ts';
import { safeEqual } from '../../secrets/crypto.ts';
import type { BreachChecker, BreachStatus } from '../../providers/breach/breach.ts';

export type Readiness =
  | {
      ok: true;
      database: string;
      vector_search: 'pgvector-hnsw' | 'exact-scan';
      checks: { breach: BreachStatus };
      capabilities: Capability[];
      capabilities_checked: boolean;
    }
  | { ok: false; reason: 'migrations_pending' | 'database_unreachable' };

export function createSystemService(deps: {
  db: Kysely<DB>;
  database: Pick<Database, 'kind' | 'vector' | 'poolStats'>;
  breach: Pick<BreachChecker, 'status'>;
  capabilities: Capabilities;
  /** `METRICS_TOKEN`: the bearer token of `/metrics` (undefined: metrics are not served). */
  metricsToken: string | undefined;
  metrics: Pick<Metrics, 'scrape' | 'contentType'>;
  /** Runs by status (the runtime area). */
  runs: { statusCounts(): Promise<Record<string, number>> };
  jobs: Pick<JobQueue, 'depths'>;
}) {
  return {
    /**
     * `GET /readyz`: the database answers and every migration is applied, with the state of the optional
     * dependencies (`checks.breach`: `ok`, `degraded` while the range API cannot be reached, `off`) and the
     * optional tools (`capabilities`, checked at most once a minute). It does not wait for the tools' check (a few
     * hundred ms of processes at start): until the first one has finished, `capabilities` is empty and
     * `capabilities_checked` false. Never throws.
     */
    async readiness(): Promise<Readiness> {
      try {
        await sql`select 1`.execute(deps.db);
        if (!(await migrationsApplied(deps.db))) return { ok: false, reason: 'migrations_pending' };
        const known = deps.capabilities.known();
        return {
          ok: true,
          database: deps.database.kind,
          vector_search: deps.database.vector ? 'pgvector-hnsw' : 'exact-scan',
          checks: { breach: deps.breach.status() },
          capabilities: known ?? [],
          capabilities_checked: known !== undefined,
        };
      } catch {
        return { ok: false, reason: 'database_unreachable' };
      }
    },

    /**
     * `GET /metrics` (docs/operations.md, Metrics): the Prometheus exposition text, for the bearer `METRICS_TOKEN`.
     * @param authorization the request's `Authorization` header.
     * @throws 503 `metrics_disabled` without METRICS_TOKEN; 401 `invalid_metrics_token` for a missing or wrong token.
     */
    async metrics(authorization: string | undefined): Promise<{ contentType: string; text: string }> {
      if (!deps.metricsToken)
        throw new Upstream(503, 'metrics_disabled', 'Metrics are off: set METRICS_TOKEN to serve them.');
      const m = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
      if (!m || !safeEqual(m[1], deps.metricsToken))
        throw new Unauthorized('A valid metrics token is required (Authorization: Bearer …).', 'invalid_metrics_token');
      const [runsByStatus, queueDepth] = await Promise.all([deps.runs.statusCounts(), deps.jobs.depths()]);
      const text = await deps.metrics.scrape({ runsByStatus, queueDepth, pool: deps.database.poolStats() });
      return { contentType: deps.metrics.contentType, text };
    },
  };
}

export type SystemService = ReturnType<typeof createSystemService>;
