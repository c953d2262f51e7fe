/** What the sage area holds of a user: their skill reviews and benchmarks (`sage_results`). */
import type { PersonalData } from '../../lib/personal-data.ts';
import type { SageRepo } from './sage.repo.ts';

export function sagePersonalData(repo: SageRepo): PersonalData {
  return {
    area: 'sage',
    exportUser: (userId) => repo.exportUser(userId),
    eraseProject: (tx, projectId) => repo.eraseProject(tx, projectId),
    eraseUser: (tx, userId) => repo.eraseUser(tx, userId),
  };
}
