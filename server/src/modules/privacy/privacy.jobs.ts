/** The privacy area's durable jobs: the clean-up after an erasure, and the daily retention purge. */
import type { JobQueue } from '../../jobs/queue.ts';
import type { PrivacyService } from './privacy.service.ts';

export function registerPrivacyJobs(jobs: JobQueue, privacy: Pick<PrivacyService, 'afterErase' | 'purge'>): void {
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
}
