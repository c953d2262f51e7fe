/** What the wiki area holds of a user (lib/personal-data.ts): each project's `wiki` pages, their erasure. */
import type { PersonalData } from '../../lib/personal-data.ts';
import type { AccountsRepo } from '../accounts/accounts.repo.ts';
import type { WikiRepo } from './wiki.repo.ts';

export function wikiPersonalData(deps: {
  repo: Pick<WikiRepo, 'exportProject' | 'eraseProject' | 'eraseUser'>;
  accounts: Pick<AccountsRepo, 'actorNames'>;
}): PersonalData {
  return {
    area: 'wiki',
    exportProject: (projectId) => deps.repo.exportProject(projectId),
    eraseProject: (tx, projectId) => deps.repo.eraseProject(tx, projectId),
    eraseUser: async (tx, userId) => deps.repo.eraseUser(tx, await deps.accounts.actorNames(tx, userId)),
  };
}
