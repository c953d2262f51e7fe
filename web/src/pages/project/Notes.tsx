import { useSearchParams } from 'react-router';
import { NoteList } from '../../features/notes/NoteList';
import { NoteView } from '../../features/notes/NoteView';
import type { TabProps } from '../../features/projects/types';

/** A note id from the `?note=` query: a positive integer, else null. */
export function noteIdOf(value: string | null): number | null {
  const n = Number(value);
  return value && Number.isInteger(n) && n > 0 ? n : null;
}

/** The project's research notes: the list, or the note named by `?note=` (kept on a reload). */
export default function Notes({ project }: TabProps) {
  const [params, setParams] = useSearchParams();
  const noteId = noteIdOf(params.get('note'));
  const open = (id: number | null) => setParams(id ? { note: String(id) } : {});
  return noteId ? (
    <NoteView project={project} id={noteId} onBack={() => open(null)} />
  ) : (
    <NoteList project={project} onOpen={open} />
  );
}
