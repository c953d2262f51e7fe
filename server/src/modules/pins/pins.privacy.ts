/** What the pins area holds of a user (lib/personal-data.ts): each project's `pins` and learnings. */
import type { PersonalData } from '../../lib/personal-data.ts';
import type { AccountsRepo } from '../accounts/accounts.repo.ts';
import type { PinsRepo } from './pins.repo.ts';

export function pinsPersonalData(deps: {
  repo: Pick<PinsRepo, 'exportProject' | 'eraseProject' | 'eraseUser'>;
  accounts: Pick<AccountsRepo, 'actorNames'>;
}): PersonalData {
  return {
    area: 'pins',
    exportProject: (projectId) => deps.repo.exportProject(projectId),
    eraseProject: (tx, projectId) => deps.repo.eraseProject(tx, projectId),
    eraseUser: async (tx, userId) => deps.repo.eraseUser(tx, await deps.accounts.actorNames(tx, userId)),
  };
}
