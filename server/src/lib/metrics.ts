/**
 * Prometheus metrics (docs/operations.md, Metrics), served at `GET /metrics` with `METRICS_TOKEN`.
 *
 * One registry per app (never prom-client's global one: tests build many apps in one process). Counters and
 * histograms are fed where things happen — the access-log hook (requests), the run's end (runs), the usage
 * record of every model call (calls and tokens), the job queue (failures); gauges of state kept elsewhere (runs
 * by status, queue depth, the database pool) are set from their owners at each scrape (`system.metrics`).
 */
import client from 'prom-client';

/** What a scrape reads from the areas that own the state. */
export interface MetricsSnapshot {
  /** Runs in each status now (queued, running, succeeded, failed, cancelled). */
  runsByStatus: Record<string, number>;
  /** Jobs not yet finished, by queue name. */
  queueDepth: Record<string, number>;
  /** Database connections: the pool's size, idle ones and callers waiting for one (the embedded one: 1 connection). */
  pool: { total: number; idle: number; waiting: number };
}

export interface Metrics {
  /** One answered request: the route's pattern (`/api/crm/projects/:name`, or `unmatched`), seconds taken. */
  request(method: string, route: string, status: number, seconds: number): void;
  /** A run ended in this process with `status` after `seconds` (from its creation). */
  runEnded(status: string, seconds: number): void;
  /** One metered model call (the usage area's `record`): its model, who paid (`own`, `platform`, `trial`), tokens. */
  modelCall(call: {
    model: string | null;
    payer: string;
    source: string;
    input: number;
    output: number;
    cache: number;
  }): void;
  /** A job handler failed (it is retried, or given up after its retries). */
  jobFailed(queue: string): void;
  /** The exposition text for a scrape, after setting the gauges from `snapshot`. */
  scrape(snapshot: MetricsSnapshot): Promise<string>;
  /** `text/plain; version=0.0.4; charset=utf-8`. */
  readonly contentType: string;
}

/** A new registry with the process's default metrics (CPU, memory, event loop, handles) and the service's own. */
export function createMetrics(): Metrics {
  const register = new client.Registry();
  client.collectDefaultMetrics({ register });
  const registers = [register];
  const http = new client.Histogram({
    name: 'crm_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const runDuration = new client.Histogram({
    name: 'crm_run_duration_seconds',
    help: 'Time from a run’s creation to its end, for runs that ended in this process, by final status.',
    labelNames: ['status'] as const,
    buckets: [1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800],
    registers,
  });
  const runs = new client.Gauge({
    name: 'crm_runs',
    help: 'Runs in each status now (all instances: read from the database at scrape).',
    labelNames: ['status'] as const,
    registers,
  });
  const calls = new client.Counter({
    name: 'crm_model_calls_total',
    help: 'Metered model calls, by model, payer (own key, platform key, trial) and source (worker, help, …).',
    labelNames: ['model', 'payer', 'source'] as const,
    registers,
  });
  const tokens = new client.Counter({
    name: 'crm_model_tokens_total',
    help: 'Tokens of metered model calls, by model, payer and kind (input, output, cache).',
    labelNames: ['model', 'payer', 'kind'] as const,
    registers,
  });
  const jobFailures = new client.Counter({
    name: 'crm_job_failures_total',
    help: 'Job handler failures, by queue (each failed attempt counts).',
    labelNames: ['queue'] as const,
    registers,
  });
  const depth = new client.Gauge({
    name: 'crm_job_queue_depth',
    help: 'Jobs not yet finished (created, waiting for a retry, or active), by queue.',
    labelNames: ['queue'] as const,
    registers,
  });
  const pool = new client.Gauge({
    name: 'crm_db_pool_connections',
    help: 'Database connections of this process: total and idle.',
    labelNames: ['state'] as const,
    registers,
  });
  const poolWaiting = new client.Gauge({
    name: 'crm_db_pool_waiting',
    help: 'Queries of this process waiting for a database connection.',
    registers,
  });

  return {
    contentType: register.contentType,
    request(method, route, status, seconds) {
      http.observe({ method, route, status: String(status) }, seconds);
    },
    runEnded(status, seconds) {
      runDuration.observe({ status }, seconds);
    },
    modelCall(c) {
      const model = c.model ?? 'unknown';
      calls.inc({ model, payer: c.payer, source: c.source });
      if (c.input) tokens.inc({ model, payer: c.payer, kind: 'input' }, c.input);
      if (c.output) tokens.inc({ model, payer: c.payer, kind: 'output' }, c.output);
      if (c.cache) tokens.inc({ model, payer: c.payer, kind: 'cache' }, c.cache);
    },
    jobFailed(queue) {
      jobFailures.inc({ queue });
    },
    async scrape(s) {
      runs.reset();
      for (const [status, n] of Object.entries(s.runsByStatus)) runs.set({ status }, n);
      depth.reset();
      for (const [queue, n] of Object.entries(s.queueDepth)) depth.set({ queue }, n);
      pool.set({ state: 'total' }, s.pool.total);
      pool.set({ state: 'idle' }, s.pool.idle);
      poolWaiting.set(s.pool.waiting);
      return register.metrics();
    },
  };
}
