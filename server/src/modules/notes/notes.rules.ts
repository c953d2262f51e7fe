/**
 * Pure rules of note sources (docs/ARCHITECTURE.md, Research notes): which files are accepted, as which
 * kind, up to which size; the chunked-upload limits; the default name of a source.
 */
import path from 'node:path';
import type { PassageLocation } from '../../lib/doc-sources.ts';
import { DIRECT_UPLOAD_LIMIT, DOCX_INFLATED_LIMIT, EXTENSIONS, type FileKind, KIND_LIMITS, MB } from './notes.files.ts';

export { DIRECT_UPLOAD_LIMIT, DOCX_INFLATED_LIMIT, EXTENSIONS, type FileKind, KIND_LIMITS, MB };

/** Bytes per chunk of a chunked upload (the last may be shorter). */
export const CHUNK_SIZE = 8 * MB;
/** Upload sessions a user may have open at once. */
export const MAX_UPLOAD_SESSIONS = 10;
/** An upload session untouched this long expires and its bytes are removed (ms). */
export const UPLOAD_IDLE_MS = 30 * 60_000;
/** The sources' text injected into a chat when no vector context is found, in characters. */
export const CONTEXT_FALLBACK_CHARS = 80_000;

/** The media type of an image extension, as the vision model takes it. */
export const IMAGE_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
};

/** The extension of a file name, lower case, without the dot ('' when none). */
export const extensionOf = (filename: string): string => path.extname(filename).slice(1).toLowerCase();

/**
 * The kind of a file by its extension (the allow-list); the declared MIME type is not trusted.
 * @returns null when the extension is not accepted.
 */
export function kindOf(filename: string): FileKind | null {
  return EXTENSIONS[extensionOf(filename)] ?? null;
}

/** Why a file cannot be a source, or null when it can: unknown type, empty, or over its kind's limit. */
export function fileProblem(
  filename: string,
  size: number,
): { code: 'unsupported_type' | 'empty_file' | 'file_too_large'; message: string; limit?: number } | null {
  const kind = kindOf(filename);
  if (!kind)
    return {
      code: 'unsupported_type',
      message: `Accepted files: ${Object.keys(EXTENSIONS).join(', ')}.`,
    };
  if (size <= 0) return { code: 'empty_file', message: 'The file is empty.' };
  if (size > KIND_LIMITS[kind])
    return {
      code: 'file_too_large',
      message: `A ${kind} source may have at most ${Math.round(KIND_LIMITS[kind] / MB)} MB.`,
      limit: KIND_LIMITS[kind],
    };
  return null;
}

/**
 * A safe file name to keep on disk: the base name with anything but letters, digits, `.`, `-` and `_`
 * replaced, at most 100 characters, never empty or a dot name.
 */
export function safeFileName(filename: string): string {
  const base = path.basename(filename.replace(/\\/g, '/'));
  const ext = extensionOf(base);
  let stem = base
    .slice(0, ext ? -(ext.length + 1) : undefined)
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^\.+/, '');
  if (!stem) stem = 'file';
  return `${stem.slice(0, 90)}${ext ? `.${ext}` : ''}`;
}

/** The default name of a source: the file's name, or the URL's host and path (at most 200 characters). */
export function defaultTitle(input: { filename?: string; url?: string }): string {
  if (input.filename) return path.basename(input.filename.replace(/\\/g, '/')).slice(0, 200) || 'file';
  try {
    const u = new URL(input.url ?? '');
    return `${u.host}${u.pathname === '/' ? '' : u.pathname}`.slice(0, 200);
  } catch {
    return (input.url ?? 'source').slice(0, 200);
  }
}

/** The YouTube video id of a youtube.com / youtu.be URL, or null. */
export function youtubeId(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return null;
  const host = u.hostname.toLowerCase().replace(/^(www|m|music)\./, '');
  let id: string | null = null;
  if (host === 'youtu.be') id = u.pathname.split('/')[1] ?? null;
  else if (host === 'youtube.com' || host === 'youtube-nocookie.com') {
    if (u.pathname === '/watch') id = u.searchParams.get('v');
    else {
      const m = /^\/(?:shorts|embed|live|v)\/([^/?#]+)/.exec(u.pathname);
      id = m?.[1] ?? null;
    }
  }
  return id && /^[A-Za-z0-9_-]{11}$/.test(id) ? id : null;
}

/** Cut `text` to at most `max` characters, on a line break when one is near the end. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const nl = cut.lastIndexOf('\n');
  return nl > max * 0.9 ? cut.slice(0, nl) : cut;
}

/** A passage put in the chat's context, under its label (`S1`, `S2`, …). */
export interface ContextPassage {
  marker: string;
  source_id: number;
  /** The index's chunk, or null when the passage is a source's text read directly (no index). */
  chunk_id: number | null;
  location: PassageLocation;
  title: string;
  text: string;
}

/** One citation of an answer (docs/ARCHITECTURE.md, Citations and locations). */
export interface Citation {
  marker: string;
  source_id: number;
  chunk_id: number | null;
  location: PassageLocation;
  /** A span of the passage's text (at most QUOTE_MAX characters). */
  quote: string;
}

/** Characters of a citation's quote. */
export const QUOTE_MAX = 300;

/** Words that tell sentences apart: letters or digits, at least 4 long (so "the", "and" do not count). */
const words = (s: string) => new Set(s.toLowerCase().match(/[\p{L}\p{N}]{4,}/gu) ?? []);

/**
 * The span of `passage` that best supports `claim`: the passage's sentence (or line) sharing the most words with
 * it, cut to `QUOTE_MAX` characters; the passage's beginning when none shares a word. Always text of the passage.
 */
export function quoteFor(passage: string, claim: string): string {
  const want = words(claim);
  let best = '';
  let score = 0;
  for (const m of passage.matchAll(/[^.!?\n]+[.!?]?/g)) {
    const sentence = m[0].trim();
    if (!sentence) continue;
    let n = 0;
    for (const w of words(sentence)) if (want.has(w)) n++;
    if (n > score) {
      score = n;
      best = sentence;
    }
  }
  const span = best || passage.trim();
  if (span.length <= QUOTE_MAX) return span;
  const cut = span.slice(0, QUOTE_MAX);
  const space = cut.lastIndexOf(' ');
  return space > QUOTE_MAX * 0.6 ? cut.slice(0, space) : cut;
}

/**
 * The citations of an answer: every label in square brackets (`[S1 p. 12]`, `[S2 00:14:05; S3]`) that names a
 * passage of the context, once each, in the order they first appear. A label that was not in the context (the
 * model invented it) is dropped. The location is the passage's own, never what the text claims.
 */
export function citationsOf(reply: string, passages: ContextPassage[]): Citation[] {
  const byMarker = new Map(passages.map((p) => [p.marker.toUpperCase(), p]));
  const out = new Map<string, Citation>();
  for (const m of reply.matchAll(/\[([^[\]\n]{1,200})\]/g)) {
    // The claim: the text of the sentence before the bracket.
    const head = reply.slice(0, m.index).replace(/[\s.!?]+$/, '');
    const claim = head
      .slice(
        Math.max(head.lastIndexOf('. '), head.lastIndexOf('! '), head.lastIndexOf('? '), head.lastIndexOf('\n')) + 1,
      )
      .replace(/\[[^\]]*\]/g, ' ');
    for (const label of m[1].matchAll(/\bS(\d{1,4})\b/gi)) {
      const p = byMarker.get(`S${label[1]}`);
      if (!p || out.has(p.marker)) continue;
      out.set(p.marker, {
        marker: p.marker,
        source_id: p.source_id,
        chunk_id: p.chunk_id,
        location: p.location,
        quote: quoteFor(p.text, claim || reply),
      });
    }
  }
  return [...out.values()];
}

/**
 * The byte range a `Range` header asks of a file of `size` bytes: `{start, end}` (inclusive), `'invalid'` when it
 * lies outside the file (answer 416), or null to send the whole file (no header, or a form not supported here, such
 * as several ranges).
 */
export function byteRange(header: string | undefined, size: number): { start: number; end: number } | 'invalid' | null {
  const m = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!m || (m[1] === '' && m[2] === '')) return null;
  let start: number;
  let end: number;
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0) return 'invalid';
    start = Math.max(0, size - n);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start >= size || start > end) return 'invalid';
  return { start, end };
}
