/**
 * What the projects area holds of a user (lib/personal-data.ts): each project's record (`project`: its fields
 * open each exported project), the project rows themselves (erased after every other area's rows of them),
 * issue bindings, and after the commit the project directories under DATA_DIR and the project icons.
 */
import fsp from 'node:fs/promises';
import type { PersonalData } from '../../lib/personal-data.ts';
import type { BlobStorage } from '../../storage/storage.ts';
import type { ProjectsRepo } from './projects.repo.ts';

export interface ProjectsPersonalDataDeps {
  repo: Pick<ProjectsRepo, 'exportProject' | 'eraseProject' | 'eraseUser'>;
  /** A project's working directory (`access.projectDir`). */
  projectDir: (projectId: number) => string;
  storage: Pick<BlobStorage, 'delete'>;
}

export function projectsPersonalData(deps: ProjectsPersonalDataDeps): PersonalData {
  return {
    area: 'project',
    exportProject: (projectId) => deps.repo.exportProject(projectId),
    eraseProject: (tx, projectId) => deps.repo.eraseProject(tx, projectId),
    eraseUser: (tx, userId) => deps.repo.eraseUser(tx, userId),
    async afterErase({ projectIds }) {
      for (const id of projectIds) {
        await fsp.rm(deps.projectDir(id), { recursive: true, force: true });
        for (const kind of ['png', 'gif']) await deps.storage.delete(`project-icons/${id}.${kind}`);
      }
    },
  };
}
