/** The runtime's durable job: execute one agent run (`runtime.run`, one job per run). */
import type { JobQueue } from '../../jobs/queue.ts';
import type { RuntimeService } from './runtime.service.ts';

/**
 * Runs executing at once in this process (job pollers, one run each). The queue's poller sleeps up to
 * its polling interval (0.5 s) between fetches even when jobs wait, so a burst drains at about
 * RUN_CONCURRENCY / 0.5 s runs per second at most; a local send wakes an idle poller at once.
 */
export const RUN_CONCURRENCY = 16;

export function registerRuntimeJobs(jobs: JobQueue, runtime: Pick<RuntimeService, 'execute'>): void {
  jobs.define('runtime.run', (data) => runtime.execute(data.run_id), {
    concurrency: RUN_CONCURRENCY,
    retryLimit: 2,
    retryDelay: 5,
    expireInSeconds: 3600,
    pollingIntervalSeconds: 0.5,
  });
}
