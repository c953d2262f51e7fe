/** The semantic index's durable job: (re)index one document (`knowledge.index`). */
import type { JobQueue } from '../../jobs/queue.ts';
import type { KnowledgeIndex } from './knowledge.index.ts';

export function registerKnowledgeJobs(jobs: JobQueue, index: Pick<KnowledgeIndex, 'indexDocument'>): void {
  jobs.define(
    'knowledge.index',
    async (job) => {
      await index.indexDocument(job);
    },
    // A batch of up to 20 jobs per poll; a send wakes the poller at once, so the interval (2 s) only bounds retries
    // and lost wake-ups. A failure retries the whole batch, which is harmless because indexing is idempotent
    // (unchanged content is skipped).
    { batchSize: 20, retryLimit: 5, retryDelay: 10, expireInSeconds: 300, pollingIntervalSeconds: 2 },
  );
}
