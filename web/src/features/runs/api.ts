/**
 * Runs of a project: the history (polled while one is queued, running or waiting for an approval), one run, cancel
 * and retry, the statuses' labels, and following a run's events (keys: `runKeys`).
 */
import { queryOptions } from '@tanstack/react-query';
import { api, must } from '../../api/client';
import { msg } from '../../i18n';
import { getSse, type SseEvent } from '../../lib/sse';
import { projectKeys } from '../projects/api';
import { useInvalidatingMutation } from '../mutation';

/** Query keys of runs. */
export const runKeys = {
  all: (project: string) => [...projectKeys.one(project), 'runs'] as const,
  list: (project: string) => [...runKeys.all(project), 'list'] as const,
  one: (project: string, id: number) => [...runKeys.all(project), 'one', id] as const,
};

/** A run as the service shows it. */
export type Run = Awaited<ReturnType<typeof listRuns>>['runs'][number];
export type RunStatus = Run['status'];

/** The words of each run status (translated where shown). */
export const RUN_STATUS_LABELS: Record<RunStatus, string> = {
  queued: msg('Queued'),
  running: msg('Running'),
  waiting_approval: msg('Waiting for approval'),
  succeeded: msg('Succeeded'),
  failed: msg('Failed'),
  cancelled: msg('Cancelled'),
};

/** Whether a run still goes on by itself (queued or running). */
export const isActive = (s: RunStatus | string | undefined) => s === 'queued' || s === 'running';
/** Whether a run can still be cancelled (also while it waits for an approval). */
export const isCancellable = (s: RunStatus) => isActive(s) || s === 'waiting_approval';
/** Whether a run can be retried. */
export const isRetryable = (s: RunStatus) => s === 'failed' || s === 'cancelled';

const listRuns = (project: string) =>
  must(api.GET('/api/crm/projects/{name}/runs', { params: { path: { name: project }, query: { limit: 50 } } }));

/** One run, refreshed every 2 s while it goes on (5 s while it waits for an approval). */
export const runQuery = (project: string, id: number) =>
  queryOptions({
    queryKey: runKeys.one(project, id),
    queryFn: () => must(api.GET('/api/crm/projects/{name}/runs/{id}', { params: { path: { name: project, id } } })),
    refetchInterval: (q) =>
      isActive(q.state.data?.status) ? 2000 : q.state.data?.status === 'waiting_approval' ? 5000 : false,
  });

/**
 * Follow run `id`'s events (`GET …/runs/:id/events`): `snapshot {text, status, tool_calls}`, `text_delta`,
 * `tool_result`, `approval_requested`, then `done {status, reply, …}`. Resolves after `done`; rejects on a lost
 * connection or an error answer (`ApiFailure`), or when `signal` aborts.
 */
export function followRun(project: string, id: number, onEvent: (e: SseEvent) => void, signal?: AbortSignal) {
  return getSse(`/api/crm/projects/${encodeURIComponent(project)}/runs/${id}/events`, onEvent, signal, ['done']);
}

/** The 50 newest runs, refreshed every 2 s while any is queued or running (5 s while one waits for an approval). */
export const runsQuery = (project: string) =>
  queryOptions({
    queryKey: runKeys.list(project),
    queryFn: () => listRuns(project),
    refetchInterval: (q) =>
      q.state.data?.runs.some((r) => isActive(r.status))
        ? 2000
        : q.state.data?.runs.some((r) => r.status === 'waiting_approval')
          ? 5000
          : false,
  });

/** Cancel a queued or running run; refreshes the history. */
export function useCancelRun(project: string) {
  return useInvalidatingMutation(
    (id: number) =>
      must(api.POST('/api/crm/projects/{name}/runs/{id}/cancel', { params: { path: { name: project, id } } })),
    () => [runKeys.all(project)],
  );
}

/** Retry a failed or cancelled run; refreshes the history. */
export function useRetryRun(project: string) {
  return useInvalidatingMutation(
    (id: number) =>
      must(api.POST('/api/crm/projects/{name}/runs/{id}/retry', { params: { path: { name: project, id } } })),
    () => [runKeys.all(project)],
  );
}
