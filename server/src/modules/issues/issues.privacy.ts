/**
 * What the issues area holds of a user (lib/personal-data.ts): each project's `issues` with their entries
 * (streamed), their erasure, and the user's name on issues of other projects (`[deleted]`).
 */
import type { PersonalData } from '../../lib/personal-data.ts';
import type { AccountsRepo } from '../accounts/accounts.repo.ts';
import type { IssuesRepo } from './issues.repo.ts';

export function issuesPersonalData(deps: {
  repo: Pick<IssuesRepo, 'exportProject' | 'eraseProject' | 'eraseUser'>;
  accounts: Pick<AccountsRepo, 'actorNames'>;
}): PersonalData {
  return {
    area: 'issues',
    exportProject: async (projectId) => deps.repo.exportProject(projectId),
    eraseProject: (tx, projectId) => deps.repo.eraseProject(tx, projectId),
    eraseUser: async (tx, userId) => deps.repo.eraseUser(tx, await deps.accounts.actorNames(tx, userId)),
  };
}
