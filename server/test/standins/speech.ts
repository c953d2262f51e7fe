/**
 * A local stand-in of an OpenAI-compatible speech server: `POST /v1/audio/transcriptions` (multipart `file`,
 * `model`, `language`, `response_format`) answering `{text, language, duration, segments}` (verbose_json) or
 * `{text}`. Replies are scripted; every request is recorded with its fields and the file's size and first bytes.
 * With `maxBytes`, a larger file is refused with 413 as OpenAI's API refuses files over 25 MB.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';

export interface SpeechRequest {
  model: string | null;
  language: string | null;
  responseFormat: string | null;
  filename: string | null;
  bytes: number;
  /** The first 12 bytes of the file (e.g. `RIFF....WAVE` for the WAV the service sends). */
  head: Buffer;
}

export interface SpeechReply {
  text?: string;
  /** Timed segments (seconds) of a verbose_json answer; default one segment over the whole file. */
  segments?: Array<{ start: number; end: number; text: string }>;
  /** Answer this HTTP status with an error body instead. */
  status?: number;
  /** Wait this long first (ms). */
  delayMs?: number;
}

export async function startSpeechStandIn(
  opts: { respond?: (req: SpeechRequest) => SpeechReply; maxBytes?: number } = {},
) {
  const requests: SpeechRequest[] = [];
  let respond: (req: SpeechRequest) => SpeechReply = opts.respond ?? ((r) => ({ text: `heard ${r.bytes} bytes` }));
  const server = http.createServer(async (req, res) => {
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.method !== 'POST' || !req.url?.startsWith('/v1/audio/transcriptions'))
      return json(404, { error: { message: 'not found' } });
    let form: FormData;
    try {
      form = await new Request('http://standin/', {
        method: 'POST',
        headers: req.headers as Record<string, string>,
        body: Readable.toWeb(req) as ReadableStream,
        duplex: 'half',
      } as RequestInit).formData();
    } catch {
      return json(400, { error: { message: 'not multipart' } });
    }
    const file = form.get('file');
    if (!(file instanceof Blob)) return json(400, { error: { message: 'file is required' } });
    const buf = Buffer.from(await file.arrayBuffer());
    const rec: SpeechRequest = {
      model: form.get('model') as string | null,
      language: form.get('language') as string | null,
      responseFormat: form.get('response_format') as string | null,
      filename: (file as File).name ?? null,
      bytes: buf.length,
      head: buf.subarray(0, 12),
    };
    requests.push(rec);
    if (opts.maxBytes !== undefined && buf.length > opts.maxBytes)
      return json(413, { error: { message: `Maximum content size limit (${opts.maxBytes}) exceeded` } });
    const reply = respond(rec);
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (reply.status && reply.status !== 200) return json(reply.status, { error: { message: 'scripted failure' } });
    const text = reply.text ?? '';
    if (rec.responseFormat === 'verbose_json')
      return json(200, {
        text,
        language: rec.language ?? 'en',
        duration: buf.length / 32_000,
        segments: reply.segments ?? [{ start: 0, end: buf.length / 32_000, text }],
      });
    return json(200, { text });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    /** The value for `SPEECH_URL`. */
    url: `http://127.0.0.1:${port}`,
    requests,
    respond(fn: (req: SpeechRequest) => SpeechReply) {
      respond = fn;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
