/**
 * The admin pages' data: dashboard, analytics, invites, users and plans, waitlists, feedback and translation
 * suggestions, platform secrets and their audit (query keys from `adminKeys`, all under `['admin']`).
 */
import { keepPreviousData, queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, must, type JsonBody, type paths } from '../../api/client';
import { useInvalidatingMutation } from '../mutation';

/** Query keys of the admin pages. */
export const adminKeys = {
  all: ['admin'] as const,
  dashboard: () => [...adminKeys.all, 'dashboard'] as const,
  analytics: (report: string, window: number) => [...adminKeys.all, 'analytics', report, window] as const,
  invites: () => [...adminKeys.all, 'invites'] as const,
  users: () => [...adminKeys.all, 'users'] as const,
  waitlist: () => [...adminKeys.all, 'waitlist'] as const,
  cloudWaitlist: () => [...adminKeys.all, 'cloud-waitlist'] as const,
  feedback: () => [...adminKeys.all, 'feedback'] as const,
  translations: () => [...adminKeys.all, 'translations'] as const,
  translationList: (status: string, locale: string) => [...adminKeys.translations(), 'list', status, locale] as const,
  translationStats: () => [...adminKeys.all, 'translation-stats'] as const,
  settings: () => [...adminKeys.all, 'platform-settings'] as const,
  audit: () => [...adminKeys.all, 'platform-audit'] as const,
  auditFor: (key: string) => [...adminKeys.audit(), key] as const,
  outbox: (status: string) => [...adminKeys.all, 'outbox', status] as const,
};

/** Outbox statuses an admin filters by (`''`: every e-mail). */
export type OutboxFilter = '' | 'kept' | 'sent' | 'retrying' | 'failed';

/** The 100 newest transactional e-mails (of one status), with their text: kept ones wait for a mail transport. */
export const outboxQuery = (status: OutboxFilter) =>
  queryOptions({
    queryKey: adminKeys.outbox(status),
    queryFn: () =>
      must(api.GET('/api/crm/admin/outbox', { params: { query: { limit: 100, ...(status ? { status } : {}) } } })),
  });

/** The dashboard's figures, every 30 s. */
export const dashboardQuery = () =>
  queryOptions({
    queryKey: adminKeys.dashboard(),
    queryFn: () => must(api.GET('/api/crm/admin/dashboard')),
    refetchInterval: 30_000,
  });

// Analytics: each report over a window (days, or hours for the onboarding ones); the previous window's data
// stays on screen while the next loads.
const report = <T>(name: string, window: number, fetch: () => Promise<T>) =>
  queryOptions({ queryKey: adminKeys.analytics(name, window), queryFn: fetch, placeholderData: keepPreviousData });

/** The lifecycle funnel over `days`. */
export const lifecycleQuery = (days: number) =>
  report('lifecycle', days, () =>
    must(api.GET('/api/crm/analytics/lifecycle-funnel', { params: { query: { days } } })),
  );
/** The onboarding funnel over `hours`. */
export const onboardingFunnelQuery = (hours: number) =>
  report('onboarding', hours, () =>
    must(api.GET('/api/crm/analytics/onboarding-funnel', { params: { query: { hours } } })),
  );
/** The setup wizard's metrics over `hours`. */
export const wizardQuery = (hours: number) =>
  report('wizard', hours, () => must(api.GET('/api/crm/analytics/wizard-metrics', { params: { query: { hours } } })));
/** Activity per day over `days`. */
export const activityQuery = (days: number) =>
  report('activity', days, () => must(api.GET('/api/crm/analytics/activity', { params: { query: { days } } })));
/** Response latency by stage over `days`. */
export const latencyQuery = (days: number) =>
  report('latency', days, () => must(api.GET('/api/crm/analytics/response-latency', { params: { query: { days } } })));
/** The model cascade over `days`. */
export const cascadeQuery = (days: number) =>
  report('cascade', days, () => must(api.GET('/api/crm/analytics/cascade', { params: { query: { days } } })));
/** Wipe metrics over `days`. */
export const wipeQuery = (days: number) =>
  report('wipe', days, () => must(api.GET('/api/crm/admin/wipe-metrics', { params: { query: { days } } })));

/** Invite codes. */
export const invitesQuery = () =>
  queryOptions({ queryKey: adminKeys.invites(), queryFn: () => must(api.GET('/api/crm/admin/invites')) });

/** Make `count` invite codes with an optional note. */
export function useCreateInvites() {
  return useInvalidatingMutation(
    (body: JsonBody<'/api/crm/admin/invites', 'post'>) => must(api.POST('/api/crm/admin/invites', { body })),
    () => [adminKeys.invites()],
  );
}

/** Revoke an invite code. */
export function useRevokeInvite() {
  return useInvalidatingMutation(
    (code: string) => must(api.DELETE('/api/crm/admin/invites/{code}', { params: { path: { code } } })),
    () => [adminKeys.invites()],
  );
}

/** The users with their plans. */
export const usersQuery = () =>
  queryOptions({ queryKey: adminKeys.users(), queryFn: () => must(api.GET('/api/crm/admin/users')) });

type Plan = JsonBody<'/api/crm/admin/users/{id}/plan', 'post'>['plan'];

/** Set a user's plan. */
export function useSetPlan() {
  return useInvalidatingMutation(
    (v: { id: number; plan: Plan }) =>
      must(api.POST('/api/crm/admin/users/{id}/plan', { params: { path: { id: v.id } }, body: { plan: v.plan } })),
    () => [adminKeys.users()],
  );
}

/** The beta waitlist. */
export const waitlistQuery = () =>
  queryOptions({ queryKey: adminKeys.waitlist(), queryFn: () => must(api.GET('/api/crm/admin/waitlist')) });

/** Approve (`ok`) or reject an application. */
export function useDecideWaitlist() {
  return useInvalidatingMutation(
    ({ id, ok }: { id: number; ok: boolean }) =>
      ok
        ? must(api.POST('/api/crm/admin/waitlist/{id}/approve', { params: { path: { id } } }))
        : must(api.POST('/api/crm/admin/waitlist/{id}/reject', { params: { path: { id } } })),
    () => [adminKeys.waitlist()],
  );
}

/** The cloud waitlist. */
export const cloudWaitlistQuery = () =>
  queryOptions({ queryKey: adminKeys.cloudWaitlist(), queryFn: () => must(api.GET('/api/crm/cloud/waitlist')) });

/** Invite a user from the cloud waitlist. */
export function useInviteFromCloudWaitlist() {
  return useInvalidatingMutation(
    (user_id: number) => must(api.POST('/api/crm/cloud/waitlist/invite', { body: { user_id } })),
    () => [adminKeys.cloudWaitlist()],
  );
}

/** The 100 latest feedback reports. */
export const feedbackQuery = () =>
  queryOptions({
    queryKey: adminKeys.feedback(),
    queryFn: () => must(api.GET('/api/crm/admin/feedback', { params: { query: { limit: 100 } } })),
  });

type SuggestionQuery = NonNullable<paths['/api/crm/admin/translations']['get']['parameters']['query']>;

/** Up to 100 translation suggestions with a status, optionally of one locale ('' for all). */
export const translationsQuery = (
  status: NonNullable<SuggestionQuery['status']>,
  locale: NonNullable<SuggestionQuery['locale']> | '',
) =>
  queryOptions({
    queryKey: adminKeys.translationList(status, locale),
    queryFn: () =>
      must(
        api.GET('/api/crm/admin/translations', {
          params: { query: { status, limit: 100, ...(locale ? { locale } : {}) } },
        }),
      ),
  });

/** Suggestions per locale and status. */
export const translationStatsQuery = () =>
  queryOptions({
    queryKey: adminKeys.translationStats(),
    queryFn: () => must(api.GET('/api/crm/admin/translations/stats')),
  });

/** Accept a suggestion (resolves with whether a catalog was patched) or reject it (resolves with null). */
export function useReviewTranslation(after?: { onSuccess?: (patched: boolean | null) => void }) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async ({ id, accept }: { id: number; accept: boolean }) => {
      if (accept) {
        const r = await must(
          api.POST('/api/crm/admin/translations/{id}/accept', { params: { path: { id } }, body: {} }),
        );
        return r.po_patched;
      }
      await must(api.POST('/api/crm/admin/translations/{id}/reject', { params: { path: { id } }, body: {} }));
      return null;
    },
    onSuccess: (patched) => {
      after?.onSuccess?.(patched);
      void qc.invalidateQueries({ queryKey: adminKeys.translations() });
      void qc.invalidateQueries({ queryKey: adminKeys.translationStats() });
    },
  });
}

const loadSettings = () => must(api.GET('/api/crm/platform/settings'));

/** A platform setting as listed. */
export type PlatformSetting = Awaited<ReturnType<typeof loadSettings>>['items'][number];

/** The platform settings (secrets: previews and lengths only). */
export const platformSettingsQuery = () => queryOptions({ queryKey: adminKeys.settings(), queryFn: loadSettings });

/** The 100 latest audit entries, of one setting when `key` is not ''. */
export const auditQuery = (key: string) =>
  queryOptions({
    queryKey: adminKeys.auditFor(key),
    queryFn: () =>
      must(api.GET('/api/crm/platform/audit', { params: { query: { limit: 100, ...(key ? { key } : {}) } } })),
  });

/** Setting calls refresh the settings and the audit (not waited for); `when` picks success or any answer. */
function useSettingCall<T, V>(call: (v: V) => Promise<T>, when: 'success' | 'settled', onSuccess?: () => void) {
  const qc = useQueryClient();
  const refresh = () => {
    void qc.invalidateQueries({ queryKey: adminKeys.settings() });
    void qc.invalidateQueries({ queryKey: adminKeys.audit() });
  };
  return useMutation({
    mutationFn: call,
    onSuccess: () => {
      onSuccess?.();
      if (when === 'success') refresh();
    },
    onSettled: () => {
      if (when === 'settled') refresh();
    },
  });
}

/** Store a new value of a setting. */
export const useSaveSetting = (name: string, onSuccess?: () => void) =>
  useSettingCall(
    (value: string) =>
      must(api.PUT('/api/crm/platform/settings/{name}', { params: { path: { name } }, body: { value } })),
    'success',
    onSuccess,
  );

/** Test a setting against its vendor. */
export const useTestSetting = (name: string) =>
  useSettingCall(
    () => must(api.POST('/api/crm/platform/settings/{name}/test', { params: { path: { name } } })),
    'settled',
  );

/** Restart what uses a setting. */
export const useRestartSetting = (name: string) =>
  useSettingCall(
    () => must(api.POST('/api/crm/platform/settings/{name}/restart', { params: { path: { name } } })),
    'settled',
  );
