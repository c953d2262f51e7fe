/**
 * Pure rules of note sources (docs/ARCHITECTURE.md, Research notes): which files are accepted, as which
 * kind, up to which size; the chunked-upload limits; the default name of a source.
 */
import path from 'node:path';
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
