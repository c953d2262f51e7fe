/** What the onboarding area holds of a user (lib/personal-data.ts): the export's `onboarding`, its erasure. */
import type { PersonalData } from '../../lib/personal-data.ts';
import type { AccountsRepo } from '../accounts/accounts.repo.ts';
import type { OnboardingRepo } from './onboarding.repo.ts';

export function onboardingPersonalData(deps: {
  repo: Pick<OnboardingRepo, 'exportUser' | 'eraseUser'>;
  accounts: Pick<AccountsRepo, 'actorNames'>;
}): PersonalData {
  return {
    area: 'onboarding',
    exportUser: (userId) => deps.repo.exportUser(userId),
    eraseUser: async (tx, userId) => deps.repo.eraseUser(tx, userId, await deps.accounts.actorNames(tx, userId)),
  };
}
