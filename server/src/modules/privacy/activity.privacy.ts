/**
 * What the activity log holds of a user (lib/personal-data.ts): each project's `activity` (streamed), its
 * erasure, the user's events outside projects, and the actor `[deleted]` on events kept in other projects.
 */
import type { ActivityPrivacy } from '../../lib/activity.ts';
import type { PersonalData } from '../../lib/personal-data.ts';
import type { AccountsRepo } from '../accounts/accounts.repo.ts';

export function activityPersonalData(deps: {
  activity: Pick<ActivityPrivacy, 'exportProject' | 'eraseProject' | 'eraseUser'>;
  accounts: Pick<AccountsRepo, 'actorNames'>;
}): PersonalData {
  return {
    area: 'activity',
    exportProject: async (projectId) => deps.activity.exportProject(projectId),
    eraseProject: (tx, projectId) => deps.activity.eraseProject(tx, projectId),
    eraseUser: async (tx, userId) => deps.activity.eraseUser(tx, userId, await deps.accounts.actorNames(tx, userId)),
  };
}
