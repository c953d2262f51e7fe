/**
 * Research notes of a project: the list, one note with its sources, chats and issue links; creating and
 * deleting notes, adding, renaming and deleting sources (query keys from `noteKeys`). File uploads with
 * progress and the live progress stream are in notesTransfer.ts; the grounded chat streams (NoteChat).
 */
import { queryOptions } from '@tanstack/react-query';
import { api, must, type JsonBody } from '../../api/client';
import { projectKeys } from '../projects/api';
import { useInvalidatingMutation, type After } from '../mutation';

/** Query keys of notes. */
export const noteKeys = {
  all: (project: string) => [...projectKeys.one(project), 'notes'] as const,
  list: (project: string) => [...noteKeys.all(project), 'list'] as const,
  one: (project: string, id: number) => [...noteKeys.all(project), 'one', id] as const,
};

/** The project's notes. */
export const notesQuery = (project: string) =>
  queryOptions({
    queryKey: noteKeys.list(project),
    queryFn: () => must(api.GET('/api/crm/projects/{name}/notes', { params: { path: { name: project } } })),
  });

/** One note with its sources, chat and issue links (not retried: a missing note shows its error at once). */
export const noteQuery = (project: string, id: number) =>
  queryOptions({
    queryKey: noteKeys.one(project, id),
    queryFn: () => must(api.GET('/api/crm/projects/{name}/notes/{id}', { params: { path: { name: project, id } } })),
    retry: false,
  });

type CreateBody = JsonBody<'/api/crm/projects/{name}/notes', 'post'>;
const createNote = (project: string, body: CreateBody) =>
  must(api.POST('/api/crm/projects/{name}/notes', { params: { path: { name: project } }, body }));

/** Create a note; the list is refreshed (not waited for). */
export function useCreateNote(project: string, after?: After<Awaited<ReturnType<typeof createNote>>, CreateBody>) {
  return useInvalidatingMutation(
    (body: CreateBody) => createNote(project, body),
    () => [noteKeys.list(project)],
    after,
  );
}

/** Delete a note with its sources, chat and issue links; the list is refreshed. */
export function useDeleteNote(project: string, after?: After<unknown, number>) {
  return useInvalidatingMutation(
    (id: number) =>
      must(api.DELETE('/api/crm/projects/{name}/notes/{id}', { params: { path: { name: project, id } } })),
    () => [noteKeys.list(project)],
    after,
  );
}

type SourceBody = JsonBody<'/api/crm/projects/{name}/notes/{id}/sources', 'post'>;

/** Add an address (web page, YouTube) or a project file as a source; the note is refreshed. */
export function useAddSource(project: string, noteId: number, after?: After<unknown, SourceBody>) {
  return useInvalidatingMutation(
    (body: SourceBody) =>
      must(
        api.POST('/api/crm/projects/{name}/notes/{id}/sources', {
          params: { path: { name: project, id: noteId } },
          body,
        }),
      ),
    () => [noteKeys.one(project, noteId)],
    after,
  );
}

/** Rename a source (`null`: back to its default name); the note is refreshed. */
export function useRenameSource(
  project: string,
  noteId: number,
  sourceId: number,
  after?: After<unknown, string | null>,
) {
  return useInvalidatingMutation(
    (title: string | null) =>
      must(
        api.PATCH('/api/crm/projects/{name}/notes/{id}/sources/{sourceId}', {
          params: { path: { name: project, id: noteId, sourceId } },
          body: { title },
        }),
      ),
    () => [noteKeys.one(project, noteId)],
    after,
  );
}

/** Delete a source with its file and text; the note is refreshed. */
export function useDeleteSource(project: string, noteId: number, sourceId: number, after?: After<unknown, void>) {
  return useInvalidatingMutation(
    () =>
      must(
        api.DELETE('/api/crm/projects/{name}/notes/{id}/sources/{sourceId}', {
          params: { path: { name: project, id: noteId, sourceId } },
        }),
      ),
    () => [noteKeys.one(project, noteId)],
    after,
  );
}
