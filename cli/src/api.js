/**
 * The service's HTTP API as arc calls it: JSON requests with the bearer token and `X-Arc-Version`, errors
 * turned into `CliError` with an exit code, and a reader of server-sent events.
 */
import { createParser } from 'eventsource-parser';
import { VERSION } from './version.js';

/** Exit codes of arc (README): usage 2, not logged in / refused token 3, not found 4, server unreachable 5. */
export const EXIT = { ok: 0, error: 1, usage: 2, auth: 3, notFound: 4, unreachable: 5 };

/** An error that ends the command with a message and an exit code. */
export class CliError extends Error {
  /** @param {string} message @param {number} [code] @param {string} [errorCode] the service's error code */
  constructor(message, code = EXIT.error, errorCode) {
    super(message);
    this.exitCode = code;
    this.errorCode = errorCode;
  }
}

/**
 * @typedef {{ server: string, token?: string, timeoutMs?: number }} Client
 */

/** @param {string} server */
export const normalizeServer = (server) => server.replace(/\/+$/, '');

/**
 * One request. `body` is sent as JSON (a Buffer or stream is sent as is, with `contentType`).
 * @param {Client} client
 * @param {string} method
 * @param {string} path absolute path on the server, e.g. `/api/cli/heartbeat`
 * @param {{ body?: unknown, raw?: BodyInit, contentLength?: number, signal?: AbortSignal }} [opts]
 * @returns {Promise<any>} the parsed JSON answer
 * @throws {CliError} with the service's message and an exit code
 */
export async function request(client, method, path, opts = {}) {
  /** @type {Record<string, string>} */
  const headers = { 'x-arc-version': VERSION, accept: 'application/json' };
  if (client.token) headers.authorization = `Bearer ${client.token}`;
  /** @type {RequestInit & { duplex?: 'half' }} */
  const init = { method, headers, signal: opts.signal ?? AbortSignal.timeout(client.timeoutMs ?? 60_000) };
  if (opts.raw !== undefined) {
    headers['content-type'] = 'application/json';
    if (opts.contentLength !== undefined) headers['content-length'] = String(opts.contentLength);
    init.body = opts.raw;
    init.duplex = 'half';
  } else if (opts.body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(opts.body);
  }
  let res;
  try {
    res = await fetch(`${normalizeServer(client.server)}${path}`, init);
  } catch (err) {
    const e = /** @type {Error} */ (err);
    const why = e.name === 'TimeoutError' ? 'did not answer in time' : 'is not reachable';
    throw new CliError(`The server ${client.server} ${why}.`, EXIT.unreachable);
  }
  const text = await res.text();
  /** @type {any} */
  let data;
  try {
    data = text ? JSON.parse(text) : {};
  } catch {
    data = { message: text.slice(0, 200) };
  }
  if (!res.ok) {
    const message = typeof data.message === 'string' ? data.message : `HTTP ${res.status}`;
    const code =
      res.status === 401
        ? EXIT.auth
        : res.status === 404
          ? EXIT.notFound
          : res.status === 400
            ? EXIT.usage
            : EXIT.error;
    const hint = res.status === 401 ? ' Run `arc login`.' : '';
    throw new CliError(`${message}${hint}`, code, data.error);
  }
  return data;
}

/**
 * Read a server-sent event stream until `onEvent` returns true, the stream ends or `signal` aborts.
 * @param {string} url
 * @param {(event: string, data: any) => boolean | void} onEvent
 * @param {AbortSignal} [signal]
 * @throws {CliError} when the stream cannot be opened
 */
export async function readSse(url, onEvent, signal) {
  let res;
  try {
    res = await fetch(url, { headers: { accept: 'text/event-stream', 'x-arc-version': VERSION }, signal });
  } catch {
    throw new CliError(`The server is not reachable (${new URL(url).origin}).`, EXIT.unreachable);
  }
  if (!res.ok || !res.body) {
    /** @type {any} */
    const data = await res.json().catch(() => ({}));
    throw new CliError(data.message ?? `HTTP ${res.status}`, res.status === 401 ? EXIT.auth : EXIT.error, data.error);
  }
  // The stream's framing (events, multi-line data, comments, CRLF) is eventsource-parser's; a heartbeat is a
  // comment and reaches no callback.
  /** @type {{ event: string, data: any }[]} */
  const received = [];
  const parser = createParser({
    onEvent: (message) => {
      let parsed;
      try {
        parsed = JSON.parse(message.data);
      } catch {
        parsed = message.data;
      }
      received.push({ event: message.event ?? 'message', data: parsed });
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of res.body) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    for (const { event, data } of received.splice(0)) {
      if (onEvent(event, data)) {
        await res.body.cancel().catch(() => {});
        return;
      }
    }
  }
}
