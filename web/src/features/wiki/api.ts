/** The wiki of a project: the page tree, one page, saving a page (query keys from `wikiKeys`). */
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, must } from '../../api/client';
import { projectKeys } from '../projects/api';

/** Query keys of the wiki. */
export const wikiKeys = {
  all: (project: string) => [...projectKeys.one(project), 'wiki'] as const,
  tree: (project: string) => [...wikiKeys.all(project), 'tree'] as const,
  page: (project: string, path: string) => [...wikiKeys.all(project), 'page', path] as const,
};

/** The wiki's page tree. */
export const wikiTreeQuery = (project: string) =>
  queryOptions({
    queryKey: wikiKeys.tree(project),
    queryFn: () => must(api.GET('/api/crm/projects/{name}/wiki/tree', { params: { path: { name: project } } })),
  });

/** One page by its path (not retried: a missing page is a new one). */
export const wikiPageQuery = (project: string, path: string) =>
  queryOptions({
    queryKey: wikiKeys.page(project, path),
    queryFn: () =>
      must(api.GET('/api/crm/projects/{name}/wiki/file', { params: { path: { name: project }, query: { path } } })),
    retry: false,
  });

/** Save a page; the answer replaces the cached page and the tree is refreshed. */
export function useSaveWikiPage(project: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (v: { path: string; content: string }) =>
      must(api.PUT('/api/crm/projects/{name}/wiki/save', { params: { path: { name: project } }, body: v })),
    onSuccess: (data, v) => {
      qc.setQueryData(wikiKeys.page(project, v.path), data);
      void qc.invalidateQueries({ queryKey: wikiKeys.tree(project) });
    },
  });
}
