/** Learnings of a project: list and add (query keys from `learningKeys`). */
import { queryOptions } from '@tanstack/react-query';
import { api, must } from '../../api/client';
import { projectKeys } from '../projects/api';
import { useInvalidatingMutation, type After } from '../mutation';

/** Query keys of learnings. */
export const learningKeys = {
  list: (project: string) => [...projectKeys.one(project), 'learnings'] as const,
};

/** The project's learnings. */
export const learningsQuery = (project: string) =>
  queryOptions({
    queryKey: learningKeys.list(project),
    queryFn: () => must(api.GET('/api/crm/projects/{name}/learnings', { params: { path: { name: project } } })),
  });

interface NewLearning {
  text: string;
  tags: string[];
}

/** Record a learning with its tags; refreshes the list. */
export function useAddLearning(project: string, after?: After<unknown, NewLearning>) {
  return useInvalidatingMutation(
    (body: NewLearning) =>
      must(api.POST('/api/crm/projects/{name}/learnings', { params: { path: { name: project } }, body })),
    () => [learningKeys.list(project)],
    after,
  );
}
