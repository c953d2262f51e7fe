/** The working folder of a project: list a folder, read, save, make a folder, upload (keys from `fileKeys`). */
import { queryOptions, useMutation } from '@tanstack/react-query';
import { api, must } from '../../api/client';
import { projectKeys } from '../projects/api';
import { useInvalidatingMutation, type After } from '../mutation';

/** Query keys of the working folder. */
export const fileKeys = {
  all: (project: string) => [...projectKeys.one(project), 'files'] as const,
  dir: (project: string, dir: string) => [...fileKeys.all(project), 'dir', dir] as const,
};

/** The entries of one folder ('' is the root). */
export const filesQuery = (project: string, dir: string) =>
  queryOptions({
    queryKey: fileKeys.dir(project, dir),
    queryFn: () =>
      must(
        api.GET('/api/crm/projects/{name}/files', {
          params: { path: { name: project }, query: dir ? { path: dir } : {} },
        }),
      ),
  });

const readFile = (project: string, path: string) =>
  must(api.GET('/api/crm/projects/{name}/files/read', { params: { path: { name: project }, query: { path } } }));

/** Read a file (text as UTF-8, else marked binary); a mutation, since it is read on a click. */
export function useReadFile(project: string, after?: After<Awaited<ReturnType<typeof readFile>>, string>) {
  return useMutation({
    mutationFn: (path: string) => readFile(project, path),
    onSuccess: (data, path) => after?.onSuccess?.(data, path),
  });
}

/** Save a text file; refreshes every listed folder. */
export function useSaveFile(project: string) {
  return useInvalidatingMutation(
    (v: { path: string; content: string }) =>
      must(api.PUT('/api/crm/projects/{name}/files/save', { params: { path: { name: project } }, body: v })),
    () => [fileKeys.all(project)],
  );
}

/** Make a folder at `path`; refreshes every listed folder. */
export function useMakeFolder(project: string) {
  return useInvalidatingMutation(
    (path: string) =>
      must(api.POST('/api/crm/projects/{name}/files/mkdir', { params: { path: { name: project } }, body: { path } })),
    () => [fileKeys.all(project)],
  );
}

/** Upload a file into folder `dir` ('' is the root); refreshes every listed folder. */
export function useUploadFile(project: string) {
  return useInvalidatingMutation(
    ({ dir, file }: { dir: string; file: File }) => {
      const fd = new FormData();
      if (dir) fd.append('path', dir);
      fd.append('file', file);
      return must(
        api.POST('/api/crm/projects/{name}/files/upload', {
          params: { path: { name: project } },
          body: {} as never,
          bodySerializer: () => fd,
        }),
      );
    },
    () => [fileKeys.all(project)],
  );
}
