/**
 * What the workers area holds of a user (lib/personal-data.ts): each project's `workers` (never a sealed bot
 * token), the user's `worker_templates`, and after the commit the icons and avatars of workers that no longer
 * exist (a sweep of `worker-icons/` and `worker-avatars/`, so images of erased workers never stay behind).
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { PersonalData } from '../../lib/personal-data.ts';
import type { BlobStorage } from '../../storage/storage.ts';
import type { WorkersRepo } from './workers.repo.ts';

export interface WorkersPersonalDataDeps {
  repo: Pick<WorkersRepo, 'exportProject' | 'exportTemplates' | 'eraseProject' | 'eraseUser' | 'existing'>;
  storage: Pick<BlobStorage, 'root' | 'delete'>;
}

/** Image folders of workers in blob storage; files are named `<worker id>.<kind>`. */
const IMAGE_DIRS = ['worker-icons', 'worker-avatars'];

export function workersPersonalData(deps: WorkersPersonalDataDeps): PersonalData[] {
  const { repo, storage } = deps;
  return [
    {
      area: 'workers',
      exportProject: (projectId) => repo.exportProject(projectId),
      eraseProject: (tx, projectId) => repo.eraseProject(tx, projectId),
      async afterErase() {
        for (const dir of IMAGE_DIRS) {
          const names = await fsp.readdir(path.join(storage.root, dir)).catch(() => [] as string[]);
          const ids = names.map((n) => Number.parseInt(n, 10)).filter((n) => Number.isSafeInteger(n) && n > 0);
          const alive = await repo.existing([...new Set(ids)]);
          for (const n of names) {
            const id = Number.parseInt(n, 10);
            if (Number.isSafeInteger(id) && id > 0 && !alive.has(id)) await storage.delete(`${dir}/${n}`);
          }
        }
      },
    },
    {
      area: 'worker_templates',
      exportUser: (userId) => repo.exportTemplates(userId),
      eraseUser: (tx, userId) => repo.eraseUser(tx, userId),
    },
  ];
}
