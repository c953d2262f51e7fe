/**
 * Upload planning of note sources, pure so it is testable without a browser: which files the service accepts
 * (its extension allow-list and per-kind size limits), which route a file takes (one multipart request, or the
 * chunked routes above 90 MB), the chunk boundaries, the progress percent over all chunks, and what to do after
 * a chunk's answer (next, done, retry after a pause, jump to the index the service expects, or give up).
 */

import { EXTENSIONS, type FileKind, KIND_LIMITS, MB } from '../../../../server/src/modules/notes/notes.files.ts';

export { EXTENSIONS, type FileKind, KIND_LIMITS, MB };

/** The file input's `accept` attribute: every accepted extension, e.g. `.mp4,.mov,…`. */
export const ACCEPT = Object.keys(EXTENSIONS)
  .map((e) => `.${e}`)
  .join(',');

/** Files larger than this (bytes) go through the chunked routes; the service takes at most 100 MB in one request. */
export const CHUNKED_ABOVE = 90 * MB;

/** Tries of one chunk before the upload gives up (the first send included). */
export const MAX_CHUNK_ATTEMPTS = 4;

/** The extension of a file name, lower case, without the dot ('' when none). */
export function extensionOf(filename: string): string {
  const base = filename.replace(/\\/g, '/').split('/').pop() ?? '';
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}

/** The kind of a file by its extension, or null when the service does not accept it. */
export function kindOf(filename: string): FileKind | null {
  return EXTENSIONS[extensionOf(filename)] ?? null;
}

/** Why a file cannot be sent (checked before any byte goes out), or its kind when it can. */
export type FileCheck =
  | { ok: true; kind: FileKind }
  | { ok: false; code: 'unsupported_type' | 'empty_file' | 'file_too_large'; limit?: number };

/** Check a file by name and size (bytes) against the allow-list and its kind's limit. */
export function checkFile(filename: string, size: number): FileCheck {
  const kind = kindOf(filename);
  if (!kind) return { ok: false, code: 'unsupported_type' };
  if (size <= 0) return { ok: false, code: 'empty_file' };
  if (size > KIND_LIMITS[kind]) return { ok: false, code: 'file_too_large', limit: KIND_LIMITS[kind] };
  return { ok: true, kind };
}

/** The route of a file of `size` bytes: one multipart request, or chunk-init and chunks above 90 MB. */
export function planRoute(size: number): 'multipart' | 'chunked' {
  return size > CHUNKED_ABOVE ? 'chunked' : 'multipart';
}

/** One chunk: its 0-based index and byte range `[start, end)`. */
export interface Chunk {
  index: number;
  start: number;
  end: number;
}

/**
 * The chunks of a file of `size` bytes in pieces of `chunkSize` bytes (the last may be shorter).
 * @throws RangeError when `chunkSize` is not a positive integer.
 */
export function chunkBounds(size: number, chunkSize: number): Chunk[] {
  if (!Number.isInteger(chunkSize) || chunkSize <= 0) throw new RangeError('chunkSize must be a positive integer');
  const out: Chunk[] = [];
  for (let start = 0, index = 0; start < size; start += chunkSize, index++)
    out.push({ index, start, end: Math.min(size, start + chunkSize) });
  return out;
}

/**
 * Whole percent (0–100) of a chunked upload: the chunks before `chunk` are sent, and `loaded` bytes of it.
 * 100 only when every byte is sent.
 */
export function chunkedPercent(chunk: Chunk, loaded: number, size: number): number {
  if (size <= 0) return 0;
  const sent = chunk.start + Math.max(0, Math.min(loaded, chunk.end - chunk.start));
  return percent(sent, size);
}

/** Whole percent (0–100) of `sent` of `total` bytes, rounded down so 100 means all of it. */
export function percent(sent: number, total: number): number {
  if (total <= 0) return 0;
  return Math.max(0, Math.min(100, Math.floor((sent / total) * 100)));
}

/** The answer to one chunk: its HTTP status (0 when the connection failed) and its JSON body. */
export interface ChunkAnswer {
  status: number;
  body?: { error?: string; expected_index?: unknown } | null;
}

/** What to do after a chunk's answer. */
export type ChunkDecision =
  | { action: 'next' }
  | { action: 'done' }
  | { action: 'retry'; delayMs: number }
  | { action: 'jump'; index: number }
  | { action: 'fail' };

/**
 * The next step after the answer to a chunk sent for the `attempt`-th time (1 = the first send):
 * 200 → the next chunk; 201 → the upload is complete; 409 with `expected_index` → send that chunk (the service
 * already has, or still needs, another one); a lost connection, 408, 429, 5xx or `chunk_incomplete` → the same
 * chunk again after a growing pause (0.5 s, 1 s, 2 s …); anything else, or after `max` tries → give up.
 */
export function chunkDecision(answer: ChunkAnswer, attempt: number, max = MAX_CHUNK_ATTEMPTS): ChunkDecision {
  const { status, body } = answer;
  if (status === 200) return { action: 'next' };
  if (status === 201) return { action: 'done' };
  if (attempt >= max) return { action: 'fail' };
  if (status === 409) {
    const index = body?.expected_index;
    return typeof index === 'number' && Number.isInteger(index) && index >= 0
      ? { action: 'jump', index }
      : { action: 'fail' };
  }
  const transient =
    status === 0 ||
    status === 408 ||
    status === 429 ||
    status >= 500 ||
    (status === 400 && body?.error === 'chunk_incomplete');
  return transient ? { action: 'retry', delayMs: 500 * 2 ** (attempt - 1) } : { action: 'fail' };
}

/** A byte count for people: `512 B`, `1.5 KB`, `12 MB`, `2 GB` (binary units, one decimal below 10). */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  const shown = u === 0 || v >= 10 ? Math.round(v) : Math.round(v * 10) / 10;
  return `${shown} ${units[u]}`;
}

/** Progress streams followed at once (each holds a connection; browsers allow about six per host). */
export const MAX_FOLLOWED = 3;

/**
 * The ids of the sources whose processing to follow live: the oldest `max` still queued or processing (the
 * rest are followed as those finish and the note is read again).
 */
export function sourcesToFollow(sources: readonly { id: number; status: string }[], max = MAX_FOLLOWED): Set<number> {
  return new Set(
    sources
      .filter((s) => s.status === 'queued' || s.status === 'processing')
      .map((s) => s.id)
      .sort((a, b) => a - b)
      .slice(0, max),
  );
}
