/**
 * The one way a feature's mutation refreshes what it changed: on success it runs the caller's own follow-up
 * (close a form, clear a field) and then invalidates the query keys the feature's key factory gives for it.
 */
import { useMutation, useQueryClient, type QueryKey } from '@tanstack/react-query';

/** What a component does after a feature's mutation succeeds (its own state only; the cache is the hook's). */
export interface After<TData, TVars> {
  onSuccess?: (data: TData, vars: TVars) => void;
}

/**
 * A mutation calling `mutationFn`; on success, `after.onSuccess` then an invalidation of every key `keys` gives
 * (the mutation stays pending until those refetches end, as `onSuccess: () => qc.invalidateQueries(…)` does).
 */
export function useInvalidatingMutation<TData, TVars = void>(
  mutationFn: (vars: TVars) => Promise<TData>,
  keys: (data: TData, vars: TVars) => readonly QueryKey[],
  after?: After<TData, TVars>,
) {
  const qc = useQueryClient();
  return useMutation<TData, Error, TVars>({
    mutationFn,
    onSuccess: (data, vars) => {
      after?.onSuccess?.(data, vars);
      return Promise.all(keys(data, vars).map((queryKey) => qc.invalidateQueries({ queryKey }))).then(() => {});
    },
  });
}
