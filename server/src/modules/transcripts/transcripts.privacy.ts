/**
 * What the transcripts area holds of a user, for the privacy export and erasure: the transcripts of the user's
 * projects (text, summary, frames; never the recording), and after erasure their files under
 * `DATA_DIR/transcripts` and their vectors in the semantic index.
 */
import type { JobQueue } from '../../jobs/queue.ts';
import type { PersonalData } from '../../lib/personal-data.ts';
import type { TranscriptPipeline } from './transcripts.pipeline.ts';
import type { TranscriptsRepo } from './transcripts.repo.ts';

export function transcriptsPersonalData(deps: {
  repo: TranscriptsRepo;
  pipeline: Pick<TranscriptPipeline, 'removeFiles'>;
  jobs: Pick<JobQueue, 'send'>;
}): PersonalData {
  // Rows erased in the transaction, remembered until afterErase removes their files and vectors.
  const erased = new Map<number, Array<{ id: number; project_id: number; source_file: string | null }>>();
  const remember = (key: number, rows: Array<{ id: number; project_id: number; source_file: string | null }>) =>
    erased.set(key, [...(erased.get(key) ?? []), ...rows]);
  return {
    area: 'transcripts',
    exportProject: (projectId) => deps.repo.forProject(projectId),
    async eraseProject(tx, projectId) {
      remember(projectId, await deps.repo.idsOf(tx, { projectId }));
      await deps.repo.deleteFor(tx, { projectId });
    },
    async eraseUser(tx, userId) {
      remember(-userId, await deps.repo.idsOf(tx, { userId }));
      await deps.repo.deleteFor(tx, { userId });
    },
    async afterErase({ userId, projectIds }) {
      const rows = [...projectIds.flatMap((p) => erased.get(p) ?? []), ...(erased.get(-userId) ?? [])];
      for (const p of projectIds) erased.delete(p);
      erased.delete(-userId);
      for (const r of rows) {
        await deps.pipeline.removeFiles(r);
        // The loader finds no row and the index drops the document's chunks.
        await deps.jobs.send('knowledge.index', {
          project_id: r.project_id,
          doc_type: 'transcript',
          doc_id: String(r.id),
        });
      }
    },
  };
}
