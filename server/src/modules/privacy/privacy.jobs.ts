/**
 * The privacy area's durable jobs: the clean-up after an erasure, the daily retention purge, and the hourly
 * check that claims and queues it (docs/ARCHITECTURE.md, Privacy: export, erasure, retention).
 */
import type { JobQueue } from '../../jobs/queue.ts';
import type { PrivacyService } from './privacy.service.ts';

/** When the retention check runs: at the top of every hour, UTC (and once at start, by the service). */
export const RETENTION_CHECK_CRON = '0 * * * *';

export function registerPrivacyJobs(
  jobs: JobQueue,
  privacy: Pick<PrivacyService, 'afterErase' | 'purge' | 'scheduleRetention'>,
): void {
  jobs.define(
    'privacy.after_erase',
    (data) => privacy.afterErase({ userId: data.user_id, projectIds: data.project_ids }),
    { retryLimit: 10, retryDelay: 60, expireInSeconds: 900, pollingIntervalSeconds: 30 },
  );
  jobs.define(
    'privacy.retention',
    async (data) => {
      await privacy.purge(data.day);
    },
    { retryLimit: 5, retryDelay: 300, expireInSeconds: 3600, pollingIntervalSeconds: 60 },
  );
  // The timer of the daily purge is pg-boss's: one check per hour across instances (an hour that fell while
  // no instance ran is checked once when one is back); the day's claim makes a second check a no-op.
  jobs.define(
    'privacy.retention_check',
    async () => {
      await privacy.scheduleRetention();
    },
    { retryLimit: 1, retryDelay: 60, expireInSeconds: 600, pollingIntervalSeconds: 60 },
  );
  jobs.schedule('privacy.retention_check', RETENTION_CHECK_CRON, {}, { missed: 'once' });
}
