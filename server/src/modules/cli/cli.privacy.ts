/**
 * What the CLI area holds of a user, for the privacy export and erasure: devices, device links and session
 * transcripts (the export lists transcripts without their content and never a link token).
 */
import type { PersonalData } from '../../lib/personal-data.ts';
import type { CliRepo } from './cli.repo.ts';

export function cliPersonalData(repo: Pick<CliRepo, 'exportUser' | 'eraseUser' | 'eraseProject'>): PersonalData {
  return {
    area: 'cli',
    exportUser: (userId) => repo.exportUser(userId),
    eraseProject: (tx, projectId) => repo.eraseProject(tx, projectId),
    eraseUser: (tx, userId) => repo.eraseUser(tx, userId),
  };
}
