/** The notes area's durable job: process one note source (`notes.process`). */
import type { JobQueue } from '../../jobs/queue.ts';
import type { NoteProcessing } from './notes.processing.ts';

export function registerNotesJobs(jobs: JobQueue, notes: Pick<NoteProcessing, 'processSource'>): void {
  jobs.define(
    'notes.process',
    async (job, ctx) => {
      await notes.processSource(job.source_id, ctx.retryCount > 0);
    },
    // Two sources at a time per instance; a long audio or video transcription may take a while (30 min bound).
    { concurrency: 2, retryLimit: 2, retryDelay: 10, expireInSeconds: 1800, pollingIntervalSeconds: 2 },
  );
}
