/**
 * The cloud container: its status (polled while provisioning), the cloud waitlist, creating and removing it,
 * the SSH key and the checks (query keys from `cloudKeys`). Invalidations are not waited for, so a button is
 * free again as soon as its call answers.
 */
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { useCallback } from 'react';
import { api, must } from '../../api/client';
import { type After } from '../mutation';

/** Query keys of the cloud container. */
export const cloudKeys = {
  all: ['cloud'] as const,
  status: () => [...cloudKeys.all, 'status'] as const,
  waitlist: () => [...cloudKeys.all, 'waitlist'] as const,
};

/** The container's status; every 3 s while it is being created. */
export const cloudStatusQuery = () =>
  queryOptions({
    queryKey: cloudKeys.status(),
    queryFn: () => must(api.GET('/api/crm/cloud/status')),
    refetchInterval: (q) => (q.state.data?.status === 'provisioning' ? 3000 : false),
  });

/** The user's place on the cloud waitlist. */
export const cloudWaitlistQuery = () =>
  queryOptions({ queryKey: cloudKeys.waitlist(), queryFn: () => must(api.GET('/api/crm/cloud/waitlist/status')) });

/** A cloud call that reads the status again after it (on success, or whatever the answer with `settled`). */
function useCloudCall<T>(call: () => Promise<T>, refresh: 'success' | 'settled' | 'none', after?: After<T, void>) {
  const qc = useQueryClient();
  const again = () => void qc.invalidateQueries({ queryKey: cloudKeys.status() });
  return useMutation({
    mutationFn: call,
    onSuccess: (data) => {
      after?.onSuccess?.(data);
      if (refresh === 'success') again();
    },
    onSettled: () => {
      if (refresh === 'settled') again();
    },
  });
}

/** Create the container. */
export const useProvision = () => useCloudCall(() => must(api.POST('/api/crm/cloud/provision')), 'success');

/** Remove the container and everything in it. */
export const useDeprovision = (after?: After<unknown, void>) =>
  useCloudCall(() => must(api.POST('/api/crm/cloud/deprovision')), 'success', after);

/** Make the container's SSH key; resolves with its public half. */
export const useSshKeygen = () => useCloudCall(() => must(api.POST('/api/crm/cloud/ssh-keygen')), 'none');

/** Check that the SSH key works. */
export const useSshVerify = () => useCloudCall(() => must(api.POST('/api/crm/cloud/ssh-verify')), 'settled');

/** Check that the agent CLI in the container is signed in. */
export const useClaudeVerify = () => useCloudCall(() => must(api.POST('/api/crm/cloud/claude-verify')), 'settled');

/** Join the cloud waitlist; the waitlist place is read again. */
export function useJoinCloudWaitlist() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => must(api.POST('/api/crm/cloud/waitlist', { body: {} })),
    onSuccess: () => void qc.invalidateQueries({ queryKey: cloudKeys.waitlist() }),
  });
}

/** A function reading the container's status again. */
export function useRefreshCloudStatus() {
  const qc = useQueryClient();
  return useCallback(() => void qc.invalidateQueries({ queryKey: cloudKeys.status() }), [qc]);
}
