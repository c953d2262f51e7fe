/** What the voice area holds of a user: estimated dictation seconds per day (clips are never kept). */
import type { PersonalData } from '../../lib/personal-data.ts';
import type { VoiceRepo } from './voice.repo.ts';

export function voicePersonalData(repo: VoiceRepo): PersonalData {
  return {
    area: 'voice',
    exportUser: async (userId) => ({ usage: await repo.usageOf(userId) }),
    eraseUser: (tx, userId) => repo.deleteFor(tx, userId),
  };
}
