/** Skills: a project's own, the global catalog, forks and their pending updates (query keys from `skillKeys`). */
import { queryOptions } from '@tanstack/react-query';
import { api, must, type JsonBody } from '../../api/client';
import { projectKeys } from '../projects/api';
import { useInvalidatingMutation, type After } from '../mutation';

/** Query keys of skills. */
export const skillKeys = {
  project: (project: string) => [...projectKeys.one(project), 'skills'] as const,
  updates: (project: string) => [...projectKeys.one(project), 'skill-updates'] as const,
  global: () => ['skills', 'global'] as const,
};

/** The project's own skills. */
export const projectSkillsQuery = (project: string) =>
  queryOptions({
    queryKey: skillKeys.project(project),
    queryFn: () => must(api.GET('/api/crm/projects/{name}/skills', { params: { path: { name: project } } })),
  });

/** The global skill catalog. */
export const globalSkillsQuery = () =>
  queryOptions({ queryKey: skillKeys.global(), queryFn: () => must(api.GET('/api/crm/skills')) });

/** Updates of the project's forks waiting for approval. */
export const skillUpdatesQuery = (project: string) =>
  queryOptions({
    queryKey: skillKeys.updates(project),
    queryFn: () => must(api.GET('/api/crm/skill-updates', { params: { query: { project, status: 'pending' } } })),
  });

const touched = (project: string) => () => [skillKeys.project(project), skillKeys.updates(project)];

type CreateBody = JsonBody<'/api/crm/projects/{name}/skills', 'post'>;

/** Create a project skill; refreshes the project's skills and updates. */
export function useCreateSkill(project: string, after?: After<unknown, CreateBody>) {
  return useInvalidatingMutation(
    (body: CreateBody) =>
      must(api.POST('/api/crm/projects/{name}/skills', { params: { path: { name: project } }, body })),
    touched(project),
    after,
  );
}

/** Fork a catalog skill into the project. */
export function useForkSkill(project: string) {
  return useInvalidatingMutation(
    (skill_id: number) =>
      must(
        api.POST('/api/crm/projects/{name}/skill-forks', { params: { path: { name: project } }, body: { skill_id } }),
      ),
    touched(project),
  );
}

/** Delete a project skill. */
export function useDeleteSkill(project: string) {
  return useInvalidatingMutation(
    (id: number) =>
      must(api.DELETE('/api/crm/projects/{name}/skills/{id}', { params: { path: { name: project, id } } })),
    touched(project),
  );
}

/** Approve (`ok`) or reject a pending update of a fork. */
export function useDecideSkillUpdate(project: string) {
  return useInvalidatingMutation(
    ({ id, ok }: { id: number; ok: boolean }) =>
      ok
        ? must(api.POST('/api/crm/skill-updates/{id}/approve', { params: { path: { id } } }))
        : must(api.POST('/api/crm/skill-updates/{id}/reject', { params: { path: { id } } })),
    touched(project),
  );
}
