/**
 * A multipart upload with progress: XMLHttpRequest, because `fetch` reports no upload progress. Same token and
 * error envelope as the typed client (a 401 to a signed-in call signs the user out).
 */
import { ApiFailure, authHeaders } from '../api/client';
import { session } from '../session';

/** One XMLHttpRequest answer: status (0 when the connection failed) and the parsed JSON body (or null). */
export interface XhrAnswer {
  status: number;
  body: any;
}

/**
 * POST `body` with XMLHttpRequest and the user's token, reporting bytes sent to `onProgress(sent, total)`.
 * Resolves with any answer (a failed connection is status 0); a 401 to a signed-in call signs the user out.
 * @throws an `AbortError` (DOMException) when `signal` aborts.
 */
export function xhrPost(
  url: string,
  body: XMLHttpRequestBodyInit,
  headers: Record<string, string>,
  onProgress: (sent: number, total: number) => void,
  signal?: AbortSignal,
): Promise<XhrAnswer> {
  return new Promise((resolve, reject) => {
    const aborted = () => reject(new DOMException('The upload was cancelled.', 'AbortError'));
    if (signal?.aborted) return aborted();
    const xhr = new XMLHttpRequest();
    xhr.open('POST', url);
    const auth = authHeaders();
    for (const [k, v] of Object.entries({ accept: 'application/json', ...auth, ...headers }))
      xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : 0);
    xhr.onload = () => {
      let parsed: unknown = null;
      try {
        parsed = JSON.parse(xhr.responseText);
      } catch {
        // not JSON
      }
      if (xhr.status === 401 && auth.authorization) session.signOut();
      resolve({ status: xhr.status, body: parsed });
    };
    xhr.onerror = () => resolve({ status: 0, body: null });
    xhr.onabort = aborted;
    signal?.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.send(body);
  });
}

/**
 * POST `form` to `url`, calling `onProgress(sent, total)` (bytes) as the body goes out.
 * @returns the parsed JSON answer of a 2xx status.
 * @throws ApiFailure with the envelope (or `network_error` / `aborted` with status 0) otherwise.
 */
export async function uploadWithProgress<T>(
  url: string,
  form: FormData,
  onProgress: (sent: number, total: number) => void,
  signal?: AbortSignal,
): Promise<T> {
  let answer: XhrAnswer;
  try {
    answer = await xhrPost(url, form, {}, onProgress, signal);
  } catch {
    throw new ApiFailure(0, { error: 'aborted', message: '' });
  }
  if (answer.status === 0) throw new ApiFailure(0, { error: 'network_error', message: '' });
  const body = answer.body && typeof answer.body === 'object' ? (answer.body as Record<string, unknown>) : {};
  if (answer.status >= 200 && answer.status < 300) return body as T;
  throw new ApiFailure(answer.status, {
    ...body,
    error: typeof body.error === 'string' ? body.error : `http_${answer.status}`,
    message: typeof body.message === 'string' ? body.message : `HTTP ${answer.status}`,
  });
}
