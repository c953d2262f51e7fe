/**
 * The notes area's transfers that openapi-fetch cannot do: file uploads with progress (XMLHttpRequest, one
 * multipart request or the chunked routes, planned by notesUpload.ts) and a source's processing progress stream
 * (server-sent events over a GET, read with fetch so the token goes in a header).
 */
import { api, ApiFailure, must } from '../../api/client';
import { getSse } from '../../lib/sse';
import { type XhrAnswer, xhrPost } from '../../lib/upload';
import { chunkBounds, chunkDecision, chunkedPercent, percent, planRoute } from './notesUpload';

const notePath = (project: string, noteId: number) =>
  `/api/crm/projects/${encodeURIComponent(project)}/notes/${noteId}`;

/** An `ApiFailure` from a failed answer (its envelope), or a plain error when the connection failed. */
function failure(answer: XhrAnswer): Error {
  if (answer.status === 0) return new Error('network');
  const b = answer.body && typeof answer.body === 'object' ? answer.body : {};
  return new ApiFailure(answer.status, {
    ...b,
    error: b.error ?? `http_${answer.status}`,
    message: b.message ?? `HTTP ${answer.status}`,
  });
}

const pause = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        reject(new DOMException('The upload was cancelled.', 'AbortError'));
      },
      { once: true },
    );
  });

/**
 * Upload `file` as a source of note `noteId`: up to 90 MB in one multipart request (field `file`, optional
 * `title`), larger through chunk-init and sequential chunks (each retried a few times; a 409 jumps to the
 * index the service expects). `onProgress(percent)` gets whole percents 0–100 over the whole file.
 * @returns the new source's id (status queued).
 * @throws ApiFailure with the service's envelope; an Error('network') when the connection fails for good;
 *   an AbortError when `signal` aborts.
 */
export async function uploadSource(
  project: string,
  noteId: number,
  file: File,
  onProgress: (percent: number) => void,
  signal?: AbortSignal,
  title?: string,
): Promise<number> {
  const base = notePath(project, noteId);
  if (planRoute(file.size) === 'multipart') {
    const fd = new FormData();
    if (title) fd.append('title', title);
    fd.append('file', file, file.name);
    const answer = await xhrPost(`${base}/sources`, fd, {}, (n) => onProgress(percent(n, file.size)), signal);
    if (answer.status !== 201) throw failure(answer);
    onProgress(100);
    return answer.body.source_id as number;
  }
  const init = await must(
    api.POST('/api/crm/projects/{name}/notes/{id}/sources/chunk-init', {
      params: { path: { name: project, id: noteId } },
      body: { filename: file.name, mime: file.type || 'application/octet-stream', size: file.size },
    }),
  );
  const chunks = chunkBounds(file.size, init.chunk_size);
  let index = 0;
  let attempt = 1;
  for (;;) {
    const chunk = chunks[index];
    if (!chunk) throw new Error('chunk_out_of_range');
    const answer = await xhrPost(
      `${base}/sources/chunks/${init.upload_id}`,
      file.slice(chunk.start, chunk.end),
      { 'content-type': 'application/octet-stream', 'x-chunk-index': String(chunk.index) },
      (n) => onProgress(chunkedPercent(chunk, n, file.size)),
      signal,
    );
    const next = chunkDecision(answer, attempt);
    switch (next.action) {
      case 'done':
        onProgress(100);
        return answer.body.source_id as number;
      case 'next':
        index++;
        attempt = 1;
        break;
      case 'jump':
        // Forward: the service has that chunk already (progress); back or the same: counts as a try.
        attempt = next.index > index ? 1 : attempt + 1;
        index = next.index;
        break;
      case 'retry':
        attempt++;
        await pause(next.delayMs, signal);
        break;
      case 'fail':
        throw failure(answer);
    }
  }
}

/** One `progress` event of a source: `status` processing, done or error; `message` the step or the reason. */
export interface SourceProgress {
  status: 'processing' | 'done' | 'error';
  message: string | null;
}

/**
 * Follow a source's processing: calls `onProgress` per `progress` event; resolves at done or error (or when
 * the stream ends). @throws ApiFailure for an error answer; the AbortError when `signal` aborts.
 */
export async function followProgress(
  project: string,
  noteId: number,
  sourceId: number,
  onProgress: (p: SourceProgress) => void,
  signal?: AbortSignal,
): Promise<void> {
  await getSse(
    `${notePath(project, noteId)}/sources/${sourceId}/progress`,
    (e) => {
      if (e.event === 'progress' && e.data && typeof e.data === 'object') onProgress(e.data as SourceProgress);
    },
    signal,
    (e) => e.event === 'progress' && ['done', 'error'].includes((e.data as SourceProgress | null)?.status ?? ''),
  );
}
