/**
 * Meeting transcripts of a project: the paged list (polled while one is unfinished), one transcript (polled
 * while its job runs), the upload with progress and retrying a failed summary (query keys from
 * `transcriptKeys`). The job's live progress stream is followed by TranscriptDetail.
 */
import { infiniteQueryOptions, queryOptions } from '@tanstack/react-query';
import { api, must } from '../../api/client';
import { uploadWithProgress } from '../../lib/upload';
import { projectKeys } from '../projects/api';
import { useInvalidatingMutation } from '../mutation';
import { isTerminal } from './transcriptSteps';

/** Query keys of transcripts. */
export const transcriptKeys = {
  all: (project: string) => [...projectKeys.one(project), 'transcripts'] as const,
  list: (project: string) => [...transcriptKeys.all(project), 'list'] as const,
  one: (project: string, id: number) => [...transcriptKeys.all(project), 'one', id] as const,
};

/** The transcripts, newest first, a page at a time; every 5 s while any is unfinished. */
export const transcriptsQuery = (project: string) =>
  infiniteQueryOptions({
    queryKey: transcriptKeys.list(project),
    initialPageParam: undefined as number | undefined,
    queryFn: ({ pageParam }) =>
      must(
        api.GET('/api/crm/projects/{name}/transcripts', {
          params: { path: { name: project }, query: pageParam ? { cursor: pageParam } : {} },
        }),
      ),
    getNextPageParam: (last) => last.next_cursor ?? undefined,
    refetchInterval: (q) =>
      q.state.data?.pages.some((p) => p.items.some((i) => !isTerminal(i.status))) ? 5000 : false,
  });

/** One transcript; every 5 s while its job runs (a fallback to the progress stream). */
export const transcriptQuery = (project: string, id: number) =>
  queryOptions({
    queryKey: transcriptKeys.one(project, id),
    queryFn: () =>
      must(api.GET('/api/crm/projects/{name}/transcripts/{id}', { params: { path: { name: project, id } } })),
    refetchInterval: (q) => (q.state.data && !isTerminal(q.state.data.status) ? 5000 : false),
  });

/**
 * Upload a recording (multipart fields `filename`, `embed_to_rag`, `file`) with progress; resolves with the
 * queued transcript's id and job. @throws ApiFailure (status 0 and `aborted` when `signal` aborts).
 */
export function uploadTranscript(
  project: string,
  form: FormData,
  onProgress: (loaded: number, total: number) => void,
  signal: AbortSignal,
) {
  return uploadWithProgress<{ transcript_id: number; job_id: string }>(
    `/api/crm/projects/${encodeURIComponent(project)}/transcripts/upload`,
    form,
    onProgress,
    signal,
  );
}

/** Retry a failed summary; the transcript is refreshed. */
export function useRetrySummary(project: string, id: number) {
  return useInvalidatingMutation(
    () =>
      must(
        api.POST('/api/crm/projects/{name}/transcripts/{id}/retry-summary', {
          params: { path: { name: project, id } },
        }),
      ),
    () => [transcriptKeys.one(project, id)],
  );
}
