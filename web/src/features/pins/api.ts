/** Pins of a project: list, add, remove (query keys from `pinKeys`). */
import { queryOptions } from '@tanstack/react-query';
import { api, must } from '../../api/client';
import { projectKeys } from '../projects/api';
import { useInvalidatingMutation, type After } from '../mutation';

/** Query keys of pins. */
export const pinKeys = {
  list: (project: string) => [...projectKeys.one(project), 'pins'] as const,
};

/** The project's pins. */
export const pinsQuery = (project: string) =>
  queryOptions({
    queryKey: pinKeys.list(project),
    queryFn: () => must(api.GET('/api/crm/projects/{name}/pins', { params: { path: { name: project } } })),
  });

/** Pin a text; refreshes the pins. */
export function useAddPin(project: string, after?: After<unknown, string>) {
  return useInvalidatingMutation(
    (text: string) =>
      must(api.POST('/api/crm/projects/{name}/pins', { params: { path: { name: project } }, body: { text } })),
    () => [pinKeys.list(project)],
    after,
  );
}

/** Remove a pin; refreshes the pins. */
export function useRemovePin(project: string) {
  return useInvalidatingMutation(
    (id: number) => must(api.DELETE('/api/crm/projects/{name}/pins/{id}', { params: { path: { name: project, id } } })),
    () => [pinKeys.list(project)],
  );
}
