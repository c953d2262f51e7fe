/**
 * What the code host area holds of a user (lib/personal-data.ts): the connection, exported as its login and date
 * (never the token), erased with the account.
 */
import type { PersonalData } from '../../lib/personal-data.ts';
import type { CodehostRepo } from './codehost.repo.ts';

export function codehostPersonalData(repo: Pick<CodehostRepo, 'exportUser' | 'eraseUser'>): PersonalData {
  return {
    area: 'codehost',
    exportUser: async (userId) => (await repo.exportUser(userId)) ?? null,
    eraseUser: (tx, userId) => repo.eraseUser(tx, userId),
  };
}
