/** Issues of a project: the board's list, one issue, create, move to a status, add to the log (`issueKeys`). */
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, must, type JsonBody } from '../../api/client';
import { projectKeys } from '../projects/api';
import { useInvalidatingMutation, type After } from '../mutation';

/** Query keys of issues. */
export const issueKeys = {
  all: (project: string) => [...projectKeys.one(project), 'issues'] as const,
  list: (project: string) => [...issueKeys.all(project), 'list'] as const,
  one: (project: string, id: number) => [...issueKeys.all(project), 'one', id] as const,
};

/** Up to 200 issues of the project (the board). */
export const issuesQuery = (project: string) =>
  queryOptions({
    queryKey: issueKeys.list(project),
    queryFn: () =>
      must(api.GET('/api/crm/projects/{name}/issues', { params: { path: { name: project }, query: { limit: 200 } } })),
  });

/** One issue with its activity log. */
export const issueQuery = (project: string, id: number) =>
  queryOptions({
    queryKey: issueKeys.one(project, id),
    queryFn: () => must(api.GET('/api/crm/projects/{name}/issues/{id}', { params: { path: { name: project, id } } })),
  });

/** Add a line to an issue's log; the answer (the issue) replaces the cached one. */
export function useLogIssue(project: string, id: number, after?: After<unknown, string>) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (message: string) =>
      must(
        api.POST('/api/crm/projects/{name}/issues/{id}/log', {
          params: { path: { name: project, id } },
          body: { message },
        }),
      ),
    onSuccess: (data, message) => {
      after?.onSuccess?.(data, message);
      qc.setQueryData(issueKeys.one(project, id), data);
    },
  });
}

/** Move an issue to a status; the board is refreshed whether it worked or not. */
export function useMoveIssue(project: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (v: { id: number; status: JsonBody<'/api/crm/projects/{name}/issues/{id}', 'put'>['status'] }) =>
      must(
        api.PUT('/api/crm/projects/{name}/issues/{id}', {
          params: { path: { name: project, id: v.id } },
          body: { status: v.status },
        }),
      ),
    onSettled: () => qc.invalidateQueries({ queryKey: issueKeys.list(project) }),
  });
}

type CreateBody = JsonBody<'/api/crm/projects/{name}/issues', 'post'>;

/** Create an issue; refreshes the board. */
export function useCreateIssue(project: string, after?: After<unknown, CreateBody>) {
  return useInvalidatingMutation(
    (body: CreateBody) =>
      must(api.POST('/api/crm/projects/{name}/issues', { params: { path: { name: project } }, body })),
    () => [issueKeys.list(project)],
    after,
  );
}
