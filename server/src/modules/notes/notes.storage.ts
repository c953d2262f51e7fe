/**
 * Where the notes area keeps its files: `DATA_DIR/notes/<project id>/<note id>/` for the sources' files and
 * `DATA_DIR/notes/uploads/` for files on their way in (chunked-upload sessions, direct uploads, copies, the
 * processing job's work folders). Every path goes through the paths helper (`lib/paths.ts`), so no name leaves the
 * notes directory.
 */
import path from 'node:path';
import { dirBytes } from '../../lib/dir-bytes.ts';
import { resolveInside } from '../../lib/paths.ts';

/** The notes area's folders under `dataDir` (module header). */
export function noteStorage(dataDir: string) {
  const root = path.join(dataDir, 'notes');
  /** A path inside the notes directory (the one paths helper). */
  const inside = (rel: string) => resolveInside(root, rel, { create: true }).then((p) => p.abs);
  return {
    inside,
    /** The folder of a note's source files. */
    noteDir: (projectId: number, noteId: number) => inside(`${projectId}/${noteId}`),
    /** The folder of a project's notes (removed after an erasure). */
    projectDir: (projectId: number) => inside(String(projectId)),
    /** Bytes of a project's source files (storage quotas); 0 when it has none. */
    bytesOf: (projectId: number) => dirBytes(path.join(root, String(projectId))),
    /** The file of a chunked-upload session. */
    uploadFile: (id: string) => inside(`uploads/${id}.part`),
    /** The folder of files on their way in. */
    uploads: () => inside('uploads'),
  };
}

export type NoteStorage = ReturnType<typeof noteStorage>;
