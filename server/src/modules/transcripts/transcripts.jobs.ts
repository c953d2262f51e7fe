/** The transcripts area's durable job: `transcripts.pump` runs the pipeline while it has work (one instance at a time). */
import type { JobQueue } from '../../jobs/queue.ts';
import type { TranscriptPipeline } from './transcripts.pipeline.ts';

export function registerTranscriptJobs(jobs: JobQueue, pipeline: Pick<TranscriptPipeline, 'pump'>): void {
  jobs.define('transcripts.pump', () => pipeline.pump(), {
    concurrency: 1,
    retryLimit: 2,
    retryDelay: 5,
    // A pump runs while work waits; an hour of video can take long. The lease, not the job, guards against two.
    expireInSeconds: 6 * 3600,
    pollingIntervalSeconds: 5,
  });
}
