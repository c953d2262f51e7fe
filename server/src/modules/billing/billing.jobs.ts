/** The billing area's durable job: charge a saved card for the next period (`billing.renew`). */
import type { JobQueue } from '../../jobs/queue.ts';
import type { BillingService } from './billing.service.ts';

export function registerBillingJobs(jobs: JobQueue, billing: Pick<BillingService, 'renew'>): void {
  jobs.define('billing.renew', async (job) => billing.renew(job), {
    // The charge is claimed in the database before it is sent, so a retry after a lost answer never charges twice;
    // a provider that cannot be reached is retried every 10 minutes, three times.
    retryLimit: 3,
    retryDelay: 600,
    expireInSeconds: 120,
    pollingIntervalSeconds: 30,
  });
}
