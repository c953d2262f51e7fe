/** Projects: the list, one project, creating one and the suggested team preset (query keys from `projectKeys`). */
import { queryOptions } from '@tanstack/react-query';
import { api, must, type JsonBody } from '../../api/client';
import { useInvalidatingMutation, type After } from '../mutation';

/** Query keys of projects. */
export const projectKeys = {
  all: ['projects'] as const,
  list: () => [...projectKeys.all, 'list'] as const,
  one: (name: string) => [...projectKeys.all, 'one', name] as const,
  suggestPreset: (niche: string) => [...projectKeys.all, 'suggest-preset', niche] as const,
};

/** The signed-in user's projects (`GET /api/crm/projects`). */
export const projectsQuery = () =>
  queryOptions({ queryKey: projectKeys.list(), queryFn: () => must(api.GET('/api/crm/projects')) });

/** One project by its technical name. */
export const projectQuery = (name: string) =>
  queryOptions({
    queryKey: projectKeys.one(name),
    queryFn: () => must(api.GET('/api/crm/projects/{name}', { params: { path: { name } } })),
  });

/** The team preset suggested for a niche (setup wizard). */
export const suggestPresetQuery = (niche: string) =>
  queryOptions({
    queryKey: projectKeys.suggestPreset(niche),
    queryFn: () => must(api.GET('/api/crm/projects/suggest-preset', { params: { query: { niche } } })),
  });

type CreateBody = JsonBody<'/api/crm/projects/create', 'post'>;
const createProject = (body: CreateBody) => must(api.POST('/api/crm/projects/create', { body }));

/** Create a project (`POST /api/crm/projects/create`); refreshes the list. */
export function useCreateProject(after?: After<Awaited<ReturnType<typeof createProject>>, CreateBody>) {
  return useInvalidatingMutation(createProject, () => [projectKeys.list()], after);
}
