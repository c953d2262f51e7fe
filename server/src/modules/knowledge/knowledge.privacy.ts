/**
 * What the semantic index holds of a user (lib/personal-data.ts): the documents and vectors of each of their
 * projects and the queued indexing jobs of those projects, erased in the transaction. Nothing is exported
 * (the index is derived from the areas' own rows).
 */
import type { JobQueue } from '../../jobs/queue.ts';
import type { PersonalData } from '../../lib/personal-data.ts';
import type { KnowledgeRepo } from './knowledge.repo.ts';

export function knowledgePersonalData(deps: {
  repo: Pick<KnowledgeRepo, 'eraseProject'>;
  jobs: Pick<JobQueue, 'forget'>;
}): PersonalData {
  return {
    area: 'semantic_index',
    async eraseProject(tx, projectId) {
      await deps.jobs.forget('knowledge.index', 'project_id', [projectId], tx);
      await deps.repo.eraseProject(tx, projectId);
    },
  };
}
