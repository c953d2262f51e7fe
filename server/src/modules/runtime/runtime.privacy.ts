/**
 * What the worker runtime holds of a user (lib/personal-data.ts): each project's chat `messages` (streamed),
 * and in the erasure the runs and messages with the queued `runtime.run` jobs of those runs.
 */
import type { JobQueue } from '../../jobs/queue.ts';
import type { PersonalData } from '../../lib/personal-data.ts';
import type { RuntimeRepo } from './runtime.repo.ts';

export function runtimePersonalData(deps: {
  repo: Pick<RuntimeRepo, 'exportMessages' | 'runIds' | 'eraseProject' | 'eraseUser'>;
  jobs: Pick<JobQueue, 'forget'>;
}): PersonalData {
  const { repo, jobs } = deps;
  return {
    area: 'messages',
    exportProject: async (projectId) => repo.exportMessages(projectId),
    async eraseProject(tx, projectId) {
      await jobs.forget('runtime.run', 'run_id', await repo.runIds(tx, { projectId }), tx);
      await repo.eraseProject(tx, projectId);
    },
    async eraseUser(tx, userId) {
      await jobs.forget('runtime.run', 'run_id', await repo.runIds(tx, { userId }), tx);
      await repo.eraseUser(tx, userId);
    },
  };
}
