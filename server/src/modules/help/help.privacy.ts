/** What the help assistant holds of a user (lib/personal-data.ts): the export's `arc_help_history`, its erasure. */
import type { PersonalData } from '../../lib/personal-data.ts';
import type { HelpRepo } from './help.repo.ts';

export function helpPersonalData(repo: Pick<HelpRepo, 'exportUser' | 'eraseUser'>): PersonalData {
  return {
    area: 'arc_help_history',
    exportUser: async (userId) => repo.exportUser(userId),
    eraseUser: (tx, userId) => repo.eraseUser(tx, userId),
  };
}
