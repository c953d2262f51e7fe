/** What the usage area holds of a user (lib/personal-data.ts): the export's `token_usage`, its erasure. */
import type { PersonalData } from '../../lib/personal-data.ts';
import type { UsageRepo } from './usage.repo.ts';

export function usagePersonalData(repo: Pick<UsageRepo, 'exportUser' | 'eraseProject' | 'eraseUser'>): PersonalData {
  return {
    area: 'token_usage',
    exportUser: async (userId) => repo.exportUser(userId),
    eraseProject: (tx, projectId) => repo.eraseProject(tx, projectId),
    eraseUser: (tx, userId) => repo.eraseUser(tx, userId),
  };
}
