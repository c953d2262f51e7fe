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

type UpdateBody = JsonBody<'/api/crm/projects/{name}/issues/{id}', 'put'>;
type ListData = Awaited<ReturnType<ReturnType<typeof issuesQuery>['queryFn'] & {}>>;

/**
 * Move an issue to a status: the board shows it in the new column at once (undone when the service refuses) and
 * is refreshed whether it worked or not.
 */
export function useMoveIssue(project: string) {
  const qc = useQueryClient();
  const key = issueKeys.list(project);
  return useMutation({
    mutationFn: (v: { id: number; status: NonNullable<UpdateBody['status']> }) =>
      must(
        api.PUT('/api/crm/projects/{name}/issues/{id}', {
          params: { path: { name: project, id: v.id } },
          body: { status: v.status },
        }),
      ),
    onMutate: async (v) => {
      await qc.cancelQueries({ queryKey: key });
      const before = qc.getQueryData<ListData>(key);
      if (before)
        qc.setQueryData<ListData>(key, {
          ...before,
          issues: before.issues.map((i) => (i.id === v.id ? { ...i, status: v.status } : i)),
        });
      return { before };
    },
    onError: (_e, _v, ctx) => {
      if (ctx?.before) qc.setQueryData(key, ctx.before);
    },
    onSettled: (_d, _e, v) =>
      Promise.all([
        qc.invalidateQueries({ queryKey: key }),
        qc.invalidateQueries({ queryKey: issueKeys.one(project, v.id) }),
      ]),
  });
}

/** Change an issue's fields (title, description, priority, assignee, status); refreshes the issue and the board. */
export function useUpdateIssue(project: string, id: number, after?: After<unknown, UpdateBody>) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: UpdateBody) =>
      must(api.PUT('/api/crm/projects/{name}/issues/{id}', { params: { path: { name: project, id } }, body })),
    onSuccess: (data, body) => {
      after?.onSuccess?.(data, body);
      qc.setQueryData(issueKeys.one(project, id), data);
      return qc.invalidateQueries({ queryKey: issueKeys.list(project) });
    },
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
