/** What the chat area holds of a user (lib/personal-data.ts): active roles, erased (nothing worth exporting). */
import type { PersonalData } from '../../lib/personal-data.ts';
import type { ChatRepo } from './chat.repo.ts';

export function chatPersonalData(repo: Pick<ChatRepo, 'eraseProject' | 'eraseUser'>): PersonalData {
  return {
    area: 'active_roles',
    eraseProject: (tx, projectId) => repo.eraseProject(tx, projectId),
    eraseUser: (tx, userId) => repo.eraseUser(tx, userId),
  };
}
