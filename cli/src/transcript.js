/**
 * `arc transcript upload`: gzip a session's jsonl, and send it as `{session_id, …, gzip_b64}` in chunks with a
 * progress bar (on a terminal). The service keeps one transcript per owner and session id (an upload replaces
 * the previous one) and refuses more than 4 MB compressed.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import cliProgress from 'cli-progress';
import { CliError, EXIT, request } from './api.js';

/** Most bytes of gzip the service accepts. */
export const GZIP_LIMIT = 4 * 1024 * 1024;

/**
 * What the CLI knows of a jsonl session log: its message count and its first user prompt.
 * @param {string} jsonl
 * @returns {{ messageCount: number, firstPrompt: string }}
 */
export function summarize(jsonl) {
  let messageCount = 0;
  let firstPrompt = '';
  for (const line of jsonl.split('\n')) {
    if (!line.trim()) continue;
    /** @type {any} */
    let o;
    try {
      o = JSON.parse(line);
    } catch {
      continue;
    }
    const msg = o && typeof o.message === 'object' && o.message ? o.message : o;
    const role = msg?.role ?? o?.type;
    if (role !== 'user' && role !== 'assistant') continue;
    messageCount++;
    if (!firstPrompt && role === 'user') {
      const c = msg.content ?? msg.text;
      firstPrompt =
        typeof c === 'string'
          ? c
          : Array.isArray(c)
            ? c
                .map((/** @type {any} */ b) => (typeof b?.text === 'string' ? b.text : ''))
                .join(' ')
                .trim()
            : '';
    }
  }
  return { messageCount, firstPrompt: firstPrompt.slice(0, 2000) };
}

/**
 * A session id from a file name (`<uuid>.jsonl` → `<uuid>`), made of the characters the service accepts.
 * @param {string} file
 */
export const sessionIdOf = (file) =>
  path
    .basename(file)
    .replace(/\.jsonl?(\.gz)?$/i, '')
    .replace(/[^A-Za-z0-9._:-]/g, '-')
    .slice(0, 200) || 'session';

/**
 * Upload a transcript file.
 * @param {import('./api.js').Client} client
 * @param {{ project: string, mode: string, file: string, sessionId?: string, deviceId?: string, progress?: boolean }} o
 * @returns {Promise<any>} the service's answer (`{ok, session_id, size_bytes, …}`)
 */
export async function uploadTranscript(client, o) {
  let raw;
  try {
    raw = fs.readFileSync(o.file);
  } catch {
    throw new CliError(`Cannot read ${o.file}.`, EXIT.usage);
  }
  const gzip = zlib.gzipSync(raw, { level: 9 });
  if (gzip.length > GZIP_LIMIT)
    throw new CliError(
      `The transcript is ${(gzip.length / 1024 / 1024).toFixed(1)} MB compressed; the service takes at most 4 MB.`,
      EXIT.error,
    );
  const { messageCount, firstPrompt } = summarize(raw.toString('utf8'));
  const head = {
    session_id: o.sessionId ?? sessionIdOf(o.file),
    device_id: o.deviceId,
    message_count: messageCount,
    first_prompt: firstPrompt,
    size_bytes: raw.length,
  };
  const prefix = Buffer.from(`${JSON.stringify(head).slice(0, -1)},"gzip_b64":"`);
  const body = Buffer.concat([prefix, Buffer.from(gzip.toString('base64')), Buffer.from('"}')]);
  const bar =
    o.progress === false
      ? undefined
      : new cliProgress.SingleBar(
          {
            format: 'uploading [{bar}] {percentage}% | {value}/{total} bytes',
            hideCursor: true,
            clearOnComplete: false,
          },
          cliProgress.Presets.shades_classic,
        );
  bar?.start(body.length, 0);
  const CHUNK = 64 * 1024;
  let sent = 0;
  const stream = new ReadableStream({
    pull(controller) {
      if (sent >= body.length) {
        controller.close();
        return;
      }
      const part = body.subarray(sent, sent + CHUNK);
      sent += part.length;
      bar?.update(sent);
      controller.enqueue(part);
    },
  });
  try {
    const path_ = `/api/cli/transcript/${encodeURIComponent(o.project)}/${encodeURIComponent(o.mode)}`;
    return await request(client, 'POST', path_, { raw: stream, contentLength: body.length });
  } finally {
    bar?.stop();
  }
}
