/**
 * Server-sent events over `fetch` with the user's token in a header (never in the URL): a POST (the chat routes
 * stream their answer) or a GET (a job's or a source's progress). The body is read as it arrives and cut into
 * events by `eventsource-parser`. A non-2xx answer is an `ApiFailure` with its error envelope.
 */
import { createParser } from 'eventsource-parser';
import { ApiFailure, authHeaders } from '../api/client';

export interface SseEvent {
  event: string;
  data: unknown;
}

/** When to stop reading: after an event with one of these names, or when the predicate says so. */
export type SseUntil = string[] | ((e: SseEvent) => boolean);

/** Read the event stream of `res` until it ends or `until` is met; the reader is released either way. */
async function readEvents(res: Response, onEvent: (e: SseEvent) => void, until: SseUntil): Promise<void> {
  if (!res.ok || !res.body) {
    const env = await res.json().catch(() => ({}));
    throw new ApiFailure(res.status, {
      ...env,
      error: env.error ?? `http_${res.status}`,
      message: env.message ?? res.statusText,
    });
  }
  const stop = typeof until === 'function' ? until : (e: SseEvent) => until.includes(e.event);
  let finished = false;
  const parser = createParser({
    onEvent(msg) {
      let data: unknown = msg.data;
      try {
        data = JSON.parse(msg.data);
      } catch {
        // plain text data
      }
      const e = { event: msg.event ?? 'message', data };
      onEvent(e);
      if (stop(e)) finished = true;
    },
  });
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    while (!finished) {
      const { value, done } = await reader.read();
      if (done) break;
      parser.feed(value);
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/**
 * POST `body` as JSON to `url` and call `onEvent` for each event (data parsed as JSON when it is JSON).
 * Resolves when the stream ends or after an event named in `until` (default `done`: the reply is complete even
 * if the server holds the connection a moment longer); rejects with `ApiFailure` on an error answer, or the
 * abort error.
 */
export async function postSse(
  url: string,
  body: unknown,
  onEvent: (e: SseEvent) => void,
  signal?: AbortSignal,
  until: SseUntil = ['done'],
): Promise<void> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...authHeaders() },
    body: JSON.stringify(body),
    signal,
  });
  await readEvents(res, onEvent, until);
}

/**
 * GET `url` and call `onEvent` for each event, as `postSse` does. Resolves when the stream ends or `until` is
 * met (default: an `end` event).
 */
export async function getSse(
  url: string,
  onEvent: (e: SseEvent) => void,
  signal?: AbortSignal,
  until: SseUntil = ['end'],
): Promise<void> {
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...authHeaders() }, signal });
  await readEvents(res, onEvent, until);
}
