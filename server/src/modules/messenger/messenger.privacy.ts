/**
 * What the messenger area holds of a user: one-time link codes (hashes only, never exported) and, per project,
 * the replies owed or sent to the owner's chat. Pollers and handled updates belong to the workers and go with
 * them.
 */
import type { PersonalData } from '../../lib/personal-data.ts';
import type { MessengerRepo } from './messenger.repo.ts';

export function messengerPersonalData(repo: MessengerRepo): PersonalData {
  return {
    area: 'messenger',
    exportProject: (projectId) => repo.exportProject(projectId),
    eraseProject: (tx, projectId) => repo.eraseProject(tx, projectId),
    eraseUser: (tx, userId) => repo.eraseUser(tx, userId),
  };
}
