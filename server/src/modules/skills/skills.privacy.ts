/**
 * What the skills area holds of a user (lib/personal-data.ts): each project's `skills`, the global skills the
 * user published (`published_skills`, erased with their documents in the semantic index), the user's name on
 * versions and decisions elsewhere, and after the commit the folders of global skills that no longer exist
 * (`DATA_DIR/skills/<name>/`; project skills' files go with the project directory).
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { PersonalData } from '../../lib/personal-data.ts';
import type { AccountsRepo } from '../accounts/accounts.repo.ts';
import type { KnowledgeRepo } from '../knowledge/knowledge.repo.ts';
import type { SkillsRepo } from './skills.repo.ts';

export function skillsPersonalData(deps: {
  repo: Pick<SkillsRepo, 'exportProject' | 'exportPublished' | 'eraseProject' | 'eraseUser' | 'globalNames'>;
  accounts: Pick<AccountsRepo, 'actorNames'>;
  index: Pick<KnowledgeRepo, 'eraseGlobalDocuments'>;
  dataDir: string;
}): PersonalData[] {
  const { repo } = deps;
  const globalDir = path.join(deps.dataDir, 'skills');
  return [
    {
      area: 'skills',
      exportProject: (projectId) => repo.exportProject(projectId),
      eraseProject: (tx, projectId) => repo.eraseProject(tx, projectId),
    },
    {
      area: 'published_skills',
      exportUser: (userId) => repo.exportPublished(userId),
      async eraseUser(tx, userId) {
        const ids = await repo.eraseUser(tx, userId, await deps.accounts.actorNames(tx, userId));
        await deps.index.eraseGlobalDocuments(tx, 'skill', ids.map(String));
      },
      async afterErase() {
        const dirs = await fsp.readdir(globalDir).catch(() => [] as string[]);
        if (!dirs.length) return;
        const alive = await repo.globalNames();
        for (const d of dirs)
          if (!alive.has(d)) await fsp.rm(path.join(globalDir, d), { recursive: true, force: true });
      },
    },
  ];
}
