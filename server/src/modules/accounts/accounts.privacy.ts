/**
 * What the accounts area holds of a user (lib/personal-data.ts): the export's `profile`, `account_settings`,
 * `auth_events` and `identities` (the identity provider's issuer, subject and e-mail); the erasure of the account itself (last of all: every other area's rows go first), the
 * messages of the mail outbox to its address, and its name on platform secrets it last wrote.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { PersonalData } from '../../lib/personal-data.ts';
import type { AccountsRepo } from './accounts.repo.ts';

export interface AccountsPersonalDataDeps {
  repo: Pick<
    AccountsRepo,
    'exportProfile' | 'exportSettings' | 'exportAuthEvents' | 'eraseUser' | 'actorNames' | 'identitiesOf'
  >;
  /** The mail outbox's erasure by address (providers/mail). */
  outbox: (ex: Kysely<DB>, email: string) => Promise<void>;
  /** The secret store's erasure of an author's name (secrets/secret-store). */
  secretAuthors: (ex: Kysely<DB>, names: string[]) => Promise<void>;
}

/**
 * @returns the entries `profile`, `account_settings`, `auth_events`, `identities` (the profile erases the account).
 */
export function accountsPersonalData(deps: AccountsPersonalDataDeps): PersonalData[] {
  const { repo } = deps;
  return [
    { area: 'account_settings', exportUser: (userId) => repo.exportSettings(userId) },
    { area: 'auth_events', exportUser: async (userId) => repo.exportAuthEvents(userId) },
    // Identities at the OpenID provider (erased with the account row).
    { area: 'identities', exportUser: (userId) => repo.identitiesOf(userId) },
    {
      area: 'profile',
      exportUser: (userId) => repo.exportProfile(userId),
      async eraseUser(tx, userId) {
        await deps.secretAuthors(tx, await repo.actorNames(tx, userId));
        const email = await repo.eraseUser(tx, userId);
        if (email) await deps.outbox(tx, email);
      },
    },
  ];
}
