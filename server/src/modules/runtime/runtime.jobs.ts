/** The runtime's durable job: execute one agent run (`runtime.run`, one job per run). */
import type { JobQueue } from '../../jobs/queue.ts';
import type { RuntimeService } from './runtime.service.ts';

/**
 * Runs executing at once in this process (job pollers, one run each). A send wakes the pollers at once, here
 * and on the other instances (the event bus), and a poller that found work looks again at once; the polling
 * interval only bounds how late a retry or a wake-up lost in transit is noticed, so it is long: 16 pollers
 * polling every 0.5 s cost the embedded database ~32 queries a second at idle.
 */
export const RUN_CONCURRENCY = 16;

export function registerRuntimeJobs(jobs: JobQueue, runtime: Pick<RuntimeService, 'execute'>): void {
  jobs.define('runtime.run', (data, ctx) => runtime.execute(data.run_id, ctx.id), {
    concurrency: RUN_CONCURRENCY,
    retryLimit: 2,
    retryDelay: 5,
    expireInSeconds: 3600,
    pollingIntervalSeconds: 5,
  });
}
