/** What the feedback area holds of a user (lib/personal-data.ts): reports and translation suggestions. */
import type { PersonalData } from '../../lib/personal-data.ts';
import type { FeedbackRepo } from './feedback.repo.ts';

export function feedbackPersonalData(repo: Pick<FeedbackRepo, 'ofUser' | 'eraseUser'>): PersonalData {
  return {
    area: 'feedback',
    exportUser: (userId) => repo.ofUser(userId),
    eraseUser: (tx, userId) => repo.eraseUser(tx, userId),
  };
}
