/** Runs of a project: the history (polled while one is queued or running), cancel and retry (keys: `runKeys`). */
import { queryOptions } from '@tanstack/react-query';
import { api, must } from '../../api/client';
import { projectKeys } from '../projects/api';
import { useInvalidatingMutation } from '../mutation';

/** Query keys of runs. */
export const runKeys = {
  all: (project: string) => [...projectKeys.one(project), 'runs'] as const,
  list: (project: string) => [...runKeys.all(project), 'list'] as const,
};

/** The 50 newest runs, refreshed every 2 s while any is queued or running. */
export const runsQuery = (project: string) =>
  queryOptions({
    queryKey: runKeys.list(project),
    queryFn: () =>
      must(api.GET('/api/crm/projects/{name}/runs', { params: { path: { name: project }, query: { limit: 50 } } })),
    refetchInterval: (q) =>
      q.state.data?.runs.some((r) => r.status === 'queued' || r.status === 'running') ? 2000 : false,
  });

/** Cancel a queued or running run; refreshes the history. */
export function useCancelRun(project: string) {
  return useInvalidatingMutation(
    (id: number) =>
      must(api.POST('/api/crm/projects/{name}/runs/{id}/cancel', { params: { path: { name: project, id } } })),
    () => [runKeys.all(project)],
  );
}

/** Retry a failed or cancelled run; refreshes the history. */
export function useRetryRun(project: string) {
  return useInvalidatingMutation(
    (id: number) =>
      must(api.POST('/api/crm/projects/{name}/runs/{id}/retry', { params: { path: { name: project, id } } })),
    () => [runKeys.all(project)],
  );
}
