/**
 * Pure rules of the CLI area (docs/ARCHITECTURE.md, The command-line client):
 * prompt cutting, version gates, bounded decompression of uploaded transcripts and the transcript viewer.
 */
import zlib from 'node:zlib';

/** Characters kept of a session's first prompt. */
export const FIRST_PROMPT_LIMIT = 280;
/** Most bytes of an uploaded transcript's gzip (4 MB compressed). */
export const TRANSCRIPT_GZIP_LIMIT = 4 * 1024 * 1024;
/** Most bytes a transcript may inflate to (32 MB): a larger one is refused, never inflated further. */
export const TRANSCRIPT_RAW_LIMIT = 32 * 1024 * 1024;

/** The CLI releases that introduced each feature (Versioning). */
export const CLI_FEATURES = { heartbeat: '1.0.14', sessionSummary: '1.0.15', transcriptUpload: '1.0.16' } as const;
export type CliFeature = keyof typeof CLI_FEATURES;

/**
 * Collapse runs of whitespace to one space, trim, and cut to `limit` characters (code points, so a cut never
 * splits a surrogate pair).
 */
export function collapsePrompt(text: string, limit = FIRST_PROMPT_LIMIT): string {
  const collapsed = text.replace(/\s+/gu, ' ').trim();
  const chars = Array.from(collapsed);
  return chars.length <= limit ? collapsed : chars.slice(0, limit).join('');
}

/** `major.minor.patch` of a version string (`1.0.16`, `v1.0.16`, `1.0.16-beta.1`), or undefined. */
export function parseVersion(v: string | undefined | null): [number, number, number] | undefined {
  const m = /^v?(\d{1,6})\.(\d{1,6})\.(\d{1,6})(?:[-+][0-9A-Za-z.+-]*)?$/.exec((v ?? '').trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

/**
 * Whether a CLI of version `v` has `feature`. A caller that names no (readable) version is not a gated CLI
 * (the web UI, curl) and has every feature.
 */
export function cliHas(v: string | undefined | null, feature: CliFeature): boolean {
  const have = parseVersion(v);
  if (!have) return true;
  const need = parseVersion(CLI_FEATURES[feature])!;
  for (let i = 0; i < 3; i++) if (have[i] !== need[i]) return have[i] > need[i];
  return true;
}

/** Why an uploaded transcript was refused. */
export type TranscriptProblem = 'not_base64' | 'too_large_compressed' | 'not_gzip' | 'too_large_raw';

/**
 * Decode `gzip_b64` (standard or URL-safe base64 of a gzip stream) and inflate it, refusing the compressed
 * bytes over `gzipLimit` and stopping inflation at `rawLimit` bytes (a gzip bomb costs at most `rawLimit`).
 * @returns the gzip bytes and the raw jsonl bytes, or the problem.
 */
export function decodeTranscript(
  b64: string,
  limits: { gzipLimit?: number; rawLimit?: number } = {},
): { gzip: Buffer; raw: Buffer } | { problem: TranscriptProblem } {
  const gzipLimit = limits.gzipLimit ?? TRANSCRIPT_GZIP_LIMIT;
  const rawLimit = limits.rawLimit ?? TRANSCRIPT_RAW_LIMIT;
  const clean = b64.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(clean) || clean.length % 4 === 1) return { problem: 'not_base64' };
  if (Math.floor((clean.length * 3) / 4) - 2 > gzipLimit) return { problem: 'too_large_compressed' };
  const gzip = Buffer.from(clean, 'base64');
  if (gzip.length > gzipLimit) return { problem: 'too_large_compressed' };
  const raw = inflateBounded(gzip, rawLimit);
  return 'problem' in raw ? raw : { gzip, raw: raw.raw };
}

/** Inflate stored gzip bytes with the same bound. */
export function inflateBounded(
  gzip: Buffer,
  rawLimit = TRANSCRIPT_RAW_LIMIT,
): { raw: Buffer } | { problem: 'not_gzip' | 'too_large_raw' } {
  if (gzip.length < 18 || gzip[0] !== 0x1f || gzip[1] !== 0x8b) return { problem: 'not_gzip' };
  try {
    return { raw: zlib.gunzipSync(gzip, { maxOutputLength: rawLimit }) };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError)
      return { problem: 'too_large_raw' };
    return { problem: 'not_gzip' };
  }
}

/** One message of the transcript viewer. */
export interface ViewerMessage {
  role: string;
  text: string;
  ts: string | null;
}

/** The text of a message's content: a string, or the text of its text (and tool) blocks. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  for (const b of content) {
    if (typeof b === 'string') parts.push(b);
    else if (b && typeof b === 'object') {
      const block = b as Record<string, unknown>;
      if (typeof block.text === 'string') parts.push(block.text);
      else if (block.type === 'tool_use' && typeof block.name === 'string') parts.push(`[tool: ${block.name}]`);
      else if (block.type === 'tool_result') {
        const inner = contentText(block.content);
        if (inner) parts.push(inner);
      }
    }
  }
  return parts.join('\n');
}

/**
 * The messages of a session's raw jsonl, in order: each line a JSON object either `{role, content|text, ts?}`
 * or an agent log entry `{type: 'user'|'assistant', message: {role, content}, timestamp}`. Lines that are not
 * JSON objects or carry no role or text are skipped.
 */
export function transcriptMessages(jsonl: string): ViewerMessage[] {
  const out: ViewerMessage[] = [];
  for (const line of jsonl.split('\n')) {
    const s = line.trim();
    if (!s) continue;
    let o: unknown;
    try {
      o = JSON.parse(s);
    } catch {
      continue;
    }
    if (!o || typeof o !== 'object' || Array.isArray(o)) continue;
    const rec = o as Record<string, unknown>;
    const msg =
      rec.message && typeof rec.message === 'object' && !Array.isArray(rec.message)
        ? (rec.message as Record<string, unknown>)
        : rec;
    const role =
      typeof msg.role === 'string' ? msg.role : typeof rec.type === 'string' ? (rec.type as string) : undefined;
    if (!role || !['user', 'assistant', 'system', 'tool'].includes(role)) continue;
    const text = contentText(msg.content ?? msg.text ?? rec.text);
    if (!text.trim()) continue;
    const tsRaw = rec.ts ?? rec.timestamp ?? msg.ts ?? null;
    const ts = typeof tsRaw === 'string' || typeof tsRaw === 'number' ? new Date(tsRaw) : null;
    out.push({ role, text, ts: ts && !Number.isNaN(ts.getTime()) ? ts.toISOString() : null });
  }
  return out;
}
