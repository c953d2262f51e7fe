/**
 * What approvals hold of a user (lib/personal-data.ts; docs/ARCHITECTURE.md, Approvals): each project's approvals,
 * pending and decided, in the export (`projects[i].approvals`: the call, its state, who decided, when, through
 * which channel and why; nothing secret is stored in them); the erasure deletes a project's approvals with their
 * queued expiry and notice jobs, and names a person who decided in someone else's project `[deleted]`.
 */
import type { JobQueue } from '../../jobs/queue.ts';
import type { PersonalData } from '../../lib/personal-data.ts';
import type { ApprovalsRepo } from './approvals.repo.ts';

export function approvalsPersonalData(deps: {
  repo: Pick<ApprovalsRepo, 'exportProject' | 'idsOfProject' | 'eraseProject' | 'forgetDecider'>;
  jobs: Pick<JobQueue, 'forget'>;
}): PersonalData {
  const { repo, jobs } = deps;
  return {
    area: 'approvals',
    exportProject: (projectId) => repo.exportProject(projectId),
    async eraseProject(tx, projectId) {
      const ids = await repo.idsOfProject(tx, projectId);
      await jobs.forget('approvals.expire', 'approval_id', ids, tx);
      await jobs.forget('approvals.notify', 'approval_id', ids, tx);
      await repo.eraseProject(tx, projectId);
    },
    eraseUser: (tx, userId) => repo.forgetDecider(tx, userId),
  };
}
