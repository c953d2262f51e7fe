/** Semantic search across a project (query keys from `searchKeys`). */
import { queryOptions } from '@tanstack/react-query';
import { api, must } from '../../api/client';
import { projectKeys } from '../projects/api';

/** Query keys of search. */
export const searchKeys = {
  hits: (project: string, q: string) => [...projectKeys.one(project), 'search', q] as const,
};

/** The hits for `q` (off while `q` is empty). */
export const searchQuery = (project: string, q: string) =>
  queryOptions({
    queryKey: searchKeys.hits(project, q),
    queryFn: () =>
      must(api.GET('/api/crm/projects/{name}/rag/search', { params: { path: { name: project }, query: { q } } })),
    enabled: !!q,
  });
