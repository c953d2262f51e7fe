/**
 * What a run keeps of each tool call it made (docs/ARCHITECTURE.md, Worker runtime: the run's record): the
 * call's input as a short summary and its result as a bounded, redacted preview, listed in the run's
 * `tool_calls` (`agent_runs.tool_calls`, erased and purged with the run). Pure rules, no I/O.
 *
 * Redaction (the same rules as the logs, http/logging.ts): a result that is JSON has the value of every
 * secret-named key (`SECRET_KEYS`: password, token, api_key, authorization, …) replaced by `[redacted]` and is
 * shown indented; in any text the values of secret-named query parameters (`token=`, `api_key=`, …), of
 * `Bearer` credentials, of `key: value` / `KEY=value` lines with a secret-named key, and well-known key shapes
 * (`sk-…`, `ghp_…`, `github_pat_…`, `xox?-…`, `AKIA…`, PEM private keys) are replaced too. The preview is the
 * first `TOOL_RESULT_PREVIEW_BYTES` UTF-8 bytes of the redacted text, cut at a character boundary.
 */
import { censorSecrets } from '../../http/logging.ts';

/** UTF-8 bytes of a result a run keeps (4 KiB). */
export const TOOL_RESULT_PREVIEW_BYTES = 4096;
/** Characters of a result that are redacted and kept from (the preview is cut from them): bounds the work per result. */
const TOOL_RESULT_SCAN_CHARS = 4 * TOOL_RESULT_PREVIEW_BYTES;
/** Characters of a tool call's input summary. */
export const TOOL_INPUT_SUMMARY_CHARS = 200;

/** A tool call's result as a run keeps it. */
export interface ToolResultPreview {
  /** The first TOOL_RESULT_PREVIEW_BYTES UTF-8 bytes of the redacted result. */
  preview: string;
  /** UTF-8 bytes of the whole result, its first 16,384 characters (the ones redacted and kept from) as redacted. */
  bytes: number;
  /** Whether `preview` is shorter than the result. */
  truncated: boolean;
  /** Whether the result is JSON (shown indented). */
  json: boolean;
}

const CENSOR = '[redacted]';
const SECRET_WORD = String.raw`(?:password|passwd|secret|client_secret|token|access_token|refresh_token|api[_-]?key|auth[_-]?token|private[_-]?key|authorization|cookie)`;
const TEXT_RULES: Array<[RegExp, string]> = [
  // The query parameters the logs redact (http/logging.ts `redactUrl`), up to the end of the address.
  [/([?&](?:token|access_token|api_key|key|password|secret)=)[^&\s#"'<>]*/gi, `$1${CENSOR}`],
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g, CENSOR],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, `$1 ${CENSOR}`],
  // `password: x`, `GITHUB_TOKEN=x`, `"api_key": "x"` (a key ending in a secret word) outside JSON (a log line, an .env file).
  // The match starts at the secret word, not at the key's start: a pattern for the whole key (`[\w-]*token…`) tried
  // from every word boundary of a long `a-a-a-…` took quadratic time (80 kB: 16 s).
  [new RegExp(String.raw`(${SECRET_WORD}["']?\s*[:=]\s*["']?)[^\s"',;&]+`, 'gi'), `$1${CENSOR}`],
  [
    /\b(?:sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16})\b/g,
    CENSOR,
  ],
];

/** `text` with the secrets of the module header replaced by `[redacted]`. Pure. */
export function redactText(text: string): string {
  let out = text;
  for (const [re, by] of TEXT_RULES) out = out.replace(re, by);
  return out;
}

/** The JSON value `text` holds when it is an object or array, else undefined. */
function asJson(text: string): unknown {
  const s = text.trim();
  if (!(s.startsWith('{') && s.endsWith('}')) && !(s.startsWith('[') && s.endsWith(']'))) return undefined;
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

/** The longest prefix of `text` of at most `max` UTF-8 bytes, never splitting a character. */
function cutUtf8(text: string, max: number): string {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= max) return text;
  let end = max;
  while (end > 0 && (buf[end] & 0xc0) === 0x80) end--; // back to the first byte of the cut character
  return buf.subarray(0, end).toString('utf8');
}

/** A tool call's result (the text the model got) as a run keeps it (module header). Pure. */
export function previewToolResult(content: string): ToolResultPreview {
  const parsed = asJson(content);
  const json = parsed !== undefined;
  const whole = json ? JSON.stringify(censorSecrets(parsed, 64), null, 2) : content;
  const text = redactText(whole.slice(0, TOOL_RESULT_SCAN_CHARS));
  const preview = cutUtf8(text, TOOL_RESULT_PREVIEW_BYTES);
  // The whole length as kept: the redacted head and the rest as it is.
  const bytes = Buffer.byteLength(text, 'utf8') + Buffer.byteLength(whole.slice(TOOL_RESULT_SCAN_CHARS), 'utf8');
  return { preview, bytes, truncated: preview.length < text.length || whole.length > TOOL_RESULT_SCAN_CHARS, json };
}

/** A tool call's input as a run lists it: JSON with secret-named keys redacted, cut at 200 characters. Pure. */
export function summarizeToolInput(input: Record<string, unknown>): string {
  const s = redactText(JSON.stringify(censorSecrets(input, 64)));
  return s.length > TOOL_INPUT_SUMMARY_CHARS ? `${s.slice(0, TOOL_INPUT_SUMMARY_CHARS)}…` : s;
}
