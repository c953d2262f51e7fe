/**
 * Workers of a project: the list, runtime status, activity, presets, templates and model tiers; adding, editing,
 * reordering, deleting, the avatar and the messenger bot (query keys from `workerKeys`).
 */
import { queryOptions } from '@tanstack/react-query';
import { api, must, type JsonBody } from '../../api/client';
import { projectKeys } from '../projects/api';
import { useInvalidatingMutation, type After } from '../mutation';

/** Query keys of workers: a project's under its project key, the catalogs (presets, templates, tiers) global. */
export const workerKeys = {
  all: (project: string) => [...projectKeys.one(project), 'workers'] as const,
  list: (project: string) => [...workerKeys.all(project), 'list'] as const,
  runtime: (project: string, id: number) => [...workerKeys.all(project), 'runtime', id] as const,
  activity: (project: string, id: number) => [...workerKeys.all(project), 'activity', id] as const,
  presets: () => ['workers', 'presets'] as const,
  templates: () => ['workers', 'templates'] as const,
  modelTiers: () => ['workers', 'model-tiers'] as const,
};

const listWorkers = (project: string) =>
  must(api.GET('/api/crm/projects/{name}/workers', { params: { path: { name: project } } }));

/** A worker as the list gives it. */
export type Worker = Awaited<ReturnType<typeof listWorkers>>['workers'][number];

/** The project's workers in their order. */
export const workersQuery = (project: string) =>
  queryOptions({ queryKey: workerKeys.list(project), queryFn: () => listWorkers(project) });

/** Runtime status of one worker (working or idle, tokens today against the cap), polled every 15 s. */
export const runtimeQuery = (project: string, id: number) =>
  queryOptions({
    queryKey: workerKeys.runtime(project, id),
    queryFn: () =>
      must(api.GET('/api/crm/projects/{name}/workers/{id}/runtime', { params: { path: { name: project, id } } })),
    refetchInterval: 15_000,
  });

/** One worker's recent activity. */
export const activityQuery = (project: string, id: number) =>
  queryOptions({
    queryKey: workerKeys.activity(project, id),
    queryFn: () =>
      must(api.GET('/api/crm/projects/{name}/workers/{id}/activity', { params: { path: { name: project, id } } })),
  });

/** The team presets (worker presets). */
export const presetsQuery = () =>
  queryOptions({ queryKey: workerKeys.presets(), queryFn: () => must(api.GET('/api/crm/workers/presets')) });

/** The user's worker templates. */
export const templatesQuery = () =>
  queryOptions({ queryKey: workerKeys.templates(), queryFn: () => must(api.GET('/api/crm/workers/templates')) });

/** The model tiers a worker may use. */
export const modelTiersQuery = () =>
  queryOptions({ queryKey: workerKeys.modelTiers(), queryFn: () => must(api.GET('/api/crm/model-tiers')) });

type AddBody = JsonBody<'/api/crm/projects/{name}/workers', 'post'>;

/** Add a worker from a preset or a template's config; refreshes the list. */
export function useAddWorker(project: string, after?: After<unknown, AddBody>) {
  return useInvalidatingMutation(
    (body: AddBody) =>
      must(api.POST('/api/crm/projects/{name}/workers', { params: { path: { name: project } }, body })),
    () => [workerKeys.list(project)],
    after,
  );
}

/** Delete a worker by id; refreshes the list. */
export function useDeleteWorker(project: string) {
  return useInvalidatingMutation(
    (id: number) =>
      must(api.DELETE('/api/crm/projects/{name}/workers/{id}', { params: { path: { name: project, id } } })),
    () => [workerKeys.list(project)],
  );
}

/** Put the workers in the order of `order` (their ids); refreshes the list. */
export function useReorderWorkers(project: string) {
  return useInvalidatingMutation(
    (order: number[]) =>
      must(
        api.POST('/api/crm/projects/{name}/workers/reorder', { params: { path: { name: project } }, body: { order } }),
      ),
    () => [workerKeys.list(project)],
  );
}

type EditBody = JsonBody<'/api/crm/projects/{name}/workers/{id}', 'put'>;

/** Save a worker's settings and, when given, its new avatar (PNG, JPEG or WebP); refreshes the list. */
export function useEditWorker(
  project: string,
  id: number,
  after?: After<void, { body: EditBody; avatar: File | null }>,
) {
  const path = { name: project, id };
  return useInvalidatingMutation(
    async ({ body, avatar }: { body: EditBody; avatar: File | null }) => {
      await must(api.PUT('/api/crm/projects/{name}/workers/{id}', { params: { path }, body }));
      if (avatar) {
        const fd = new FormData();
        fd.append('file', avatar);
        await must(
          api.POST('/api/crm/projects/{name}/workers/{id}/avatar', {
            params: { path },
            body: {} as never,
            bodySerializer: () => fd,
          }),
        );
      }
    },
    () => [workerKeys.list(project)],
    after,
  );
}

/** Bot usernames the service suggests for a worker (changes nothing). */
export function useSuggestBotNames(project: string, id: number) {
  return useInvalidatingMutation(
    () =>
      must(
        api.POST('/api/crm/projects/{name}/workers/{id}/suggest-bot-username', {
          params: { path: { name: project, id } },
        }),
      ),
    () => [],
  );
}

/** Bind a messenger bot to a worker by its token; refreshes the list. */
export function useBindBot(project: string, id: number) {
  return useInvalidatingMutation(
    (token: string) =>
      must(
        api.POST('/api/crm/projects/{name}/workers/{id}/telegram-token', {
          params: { path: { name: project, id } },
          body: { token },
        }),
      ),
    () => [workerKeys.list(project)],
  );
}

/** Unbind a worker's messenger bot; refreshes the list. */
export function useUnbindBot(project: string, id: number) {
  return useInvalidatingMutation(
    () =>
      must(
        api.DELETE('/api/crm/projects/{name}/workers/{id}/telegram-token', { params: { path: { name: project, id } } }),
      ),
    () => [workerKeys.list(project)],
  );
}
