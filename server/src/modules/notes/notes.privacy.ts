/**
 * What the notes area holds of a user (lib/personal-data.ts): each owned project's notes with their sources (text,
 * never the files), chats and issue links for the export; their rows in the erasure, and afterwards the project's
 * `DATA_DIR/notes/<project>` folder with the sources' files.
 */
import fsp from 'node:fs/promises';
import type { PersonalData } from '../../lib/personal-data.ts';
import type { NotesRepo } from './notes.repo.ts';
import type { NoteStorage } from './notes.storage.ts';

export function notesPersonalData(deps: {
  repo: Pick<NotesRepo, 'exportProject' | 'eraseProject'>;
  storage: Pick<NoteStorage, 'projectDir'>;
}): PersonalData {
  return {
    area: 'notes',
    exportProject: (projectId) => deps.repo.exportProject(projectId),
    eraseProject: (tx, projectId) => deps.repo.eraseProject(tx, projectId).then(() => {}),
    async afterErase(scope) {
      for (const id of scope.projectIds)
        await fsp.rm(await deps.storage.projectDir(id), { recursive: true, force: true });
    },
  };
}
