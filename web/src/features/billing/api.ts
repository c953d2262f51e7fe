/** The plan and payments: billing status, the billing summary, checkout and cancelling (keys: `billingKeys`). */
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { useCallback } from 'react';
import { api, must } from '../../api/client';
import { authKeys } from '../auth/api';
import { type After } from '../mutation';

/** Query keys of billing. */
export const billingKeys = {
  all: ['billing'] as const,
  status: () => [...billingKeys.all, 'status'] as const,
  summary: () => [...billingKeys.all, 'summary'] as const,
};

/** The plan, its limits, usage and features. */
export const billingStatusQuery = () =>
  queryOptions({ queryKey: billingKeys.status(), queryFn: () => must(api.GET('/api/crm/billing/status')) });

/** The billing summary (payments, next charge). */
export const billingSummaryQuery = () =>
  queryOptions({ queryKey: billingKeys.summary(), queryFn: () => must(api.GET('/api/crm/account/billing-summary')) });

/** Open a checkout session for a plan; resolves with the hosted invoice's address. */
export const startCheckout = (plan: 'min' | 'cloud', successUrl: string, cancelUrl: string) =>
  must(
    api.POST('/api/crm/billing/checkout-session', { body: { plan, success_url: successUrl, cancel_url: cancelUrl } }),
  );

/** Cancel the paid plan; the status, summary and the signed-in user are read again (not waited for). */
export function useCancelPlan(after?: After<unknown, void>) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => must(api.POST('/api/crm/billing/cancel')),
    onSuccess: (data) => {
      after?.onSuccess?.(data);
      void qc.invalidateQueries({ queryKey: billingKeys.status() });
      void qc.invalidateQueries({ queryKey: billingKeys.summary() });
      void qc.invalidateQueries({ queryKey: authKeys.me() });
    },
  });
}

/** Read the signed-in user again (after the plan changed). */
export function useRefreshMe() {
  const qc = useQueryClient();
  return useCallback(() => void qc.invalidateQueries({ queryKey: authKeys.me() }), [qc]);
}
