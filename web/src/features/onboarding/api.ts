/**
 * Onboarding: the checklist's progress, the intro videos, marking a step, dismissing and replaying the
 * checklist, and the setup wizard's project creation (query keys from `onboardingKeys`).
 */
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, must } from '../../api/client';

/** Query keys of onboarding. */
export const onboardingKeys = {
  all: ['onboarding'] as const,
  progress: () => [...onboardingKeys.all, 'progress'] as const,
  videos: () => [...onboardingKeys.all, 'videos'] as const,
};

/** The checklist's progress. */
export const progressQuery = () =>
  queryOptions({ queryKey: onboardingKeys.progress(), queryFn: () => must(api.GET('/api/crm/onboarding/progress')) });

/** The intro videos. */
export const videosQuery = () =>
  queryOptions({ queryKey: onboardingKeys.videos(), queryFn: () => must(api.GET('/api/crm/onboarding/videos')) });

type Progress = Awaited<ReturnType<NonNullable<ReturnType<typeof progressQuery>['queryFn']>>>;

/** A checklist call whose answer (the new progress) replaces the cached progress. */
function useProgressCall<V>(call: (v: V) => Promise<Progress>) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: call,
    onSuccess: (data) => qc.setQueryData(onboardingKeys.progress(), data),
  });
}

/** Mark a step completed or skipped (from the web). */
export const useStepEvent = () =>
  useProgressCall((v: { step: string; status: 'completed' | 'skipped' }) =>
    must(api.POST('/api/crm/onboarding/event', { body: { ...v, source: 'web' } })),
  );

/** Hide the checklist. */
export const useDismissChecklist = () => useProgressCall(() => must(api.POST('/api/crm/onboarding/dismiss')));

/** Show the checklist again from the start. */
export const useReplayChecklist = () => useProgressCall(() => must(api.POST('/api/crm/onboarding/replay')));

/** The setup wizard's answers (the multipart field `config`, as JSON). */
export interface SetupConfig {
  displayName: string;
  projectName: string;
  niche?: string;
  teamPreset?: string;
  llmKey?: string;
}

/** Create a project from the wizard's answers; resolves with the project. */
export const setupProject = (config: SetupConfig) =>
  must(
    api.POST('/api/crm/onboarding/setup', {
      body: { config: JSON.stringify(config) } as never,
      bodySerializer: () => {
        const fd = new FormData();
        fd.append('config', JSON.stringify(config));
        return fd;
      },
    }),
  );

/**
 * Record a setup wizard metric (`POST /api/crm/metrics/wizard`): `start` when the wizard opens, `complete` with its
 * duration when the project is made, `abandon` when it is left before. Best effort: a failure is ignored.
 */
export function recordWizard(body: {
  action: 'start' | 'complete' | 'abandon';
  duration_ms?: number;
  attempts?: number;
  success?: boolean;
  project?: string;
  locale?: string;
}): void {
  void api.POST('/api/crm/metrics/wizard', { body }).catch(() => {});
}
