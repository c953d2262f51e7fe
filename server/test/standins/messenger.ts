/**
 * A local bot API (the messenger's wire protocol):
 *  - `GET|POST /bot{token}/getMe` answers the bot registered for the token (401 `{ok:false}` otherwise);
 *  - `POST /bot{token}/sendMessage` records `{chat_id, text, reply_markup}` (inline keyboards included) and answers
 *    its `message_id`; `editMessageText` `{chat_id, message_id, text}` and `answerCallbackQuery` are recorded;
 *  - `POST /bot{token}/getUpdates` `{offset, timeout}`: long polling over the updates pushed with `pushMessage` /
 *    `pushCallback` (ids from 1 up per bot); updates below `offset` are forgotten, as the real API does; the call
 *    waits up to `timeout` seconds for one; a second concurrent `getUpdates` of one token answers 409;
 *  - `revoke(token)`: every later call of the token answers 401; `flood(token, retryAfter, n)`: its next `n` calls
 *    answer 429 with `parameters.retry_after`.
 * Every call is recorded as `{method, token, body}`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BotCall {
  method: string;
  token: string;
  body: any;
  at: number;
  /** The HTTP status answered. */
  status?: number;
}

interface Queue {
  nextId: number;
  history: Array<{ update_id: number; [k: string]: unknown }>;
  updates: Array<{ update_id: number; [k: string]: unknown }>;
  polling: boolean;
  waiters: Array<() => void>;
}

export async function startMessengerStandIn(bots: Record<string, { id: number; username: string }> = {}) {
  const calls: BotCall[] = [];
  const queues = new Map<string, Queue>();
  const revoked = new Set<string>();
  const floods = new Map<string, { retryAfter: number; n: number }>();
  let conflicts = 0;
  const queue = (token: string) => {
    let q = queues.get(token);
    if (!q) queues.set(token, (q = { nextId: 1, history: [], updates: [], polling: false, waiters: [] }));
    return q;
  };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const m = /^\/bot([^/]+)\/([A-Za-z]+)/.exec(req.url ?? '');
      const seen: { call?: BotCall } = {};
      const send = (status: number, body: unknown) => {
        if (seen.call) seen.call.status = status;
        if (!res.writableEnded) res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      };
      if (!m) return send(404, { ok: false, error_code: 404, description: 'Not Found' });
      const [, token, method] = m;
      let body: any;
      try {
        body = raw ? JSON.parse(raw) : {};
      } catch {
        return send(400, { ok: false, error_code: 400, description: 'Bad Request: invalid JSON' });
      }
      seen.call = { method, token, body, at: Date.now() };
      calls.push(seen.call);
      const bot = bots[token];
      if (!bot || revoked.has(token)) return send(401, { ok: false, error_code: 401, description: 'Unauthorized' });
      const flood = floods.get(token);
      if (flood && flood.n > 0) {
        flood.n--;
        return send(429, {
          ok: false,
          error_code: 429,
          description: `Too Many Requests: retry after ${flood.retryAfter}`,
          parameters: { retry_after: flood.retryAfter },
        });
      }
      if (method === 'getMe')
        return send(200, {
          ok: true,
          result: { id: bot.id, is_bot: true, first_name: bot.username, username: bot.username },
        });
      if (method === 'sendMessage') {
        if (!body.chat_id || !body.text)
          return send(400, { ok: false, error_code: 400, description: 'Bad Request: chat_id and text are required' });
        if (String(body.text).length > 4096)
          return send(400, { ok: false, error_code: 400, description: 'Bad Request: message is too long' });
        return send(200, {
          ok: true,
          result: { message_id: calls.length, chat: { id: body.chat_id }, text: body.text },
        });
      }
      if (method === 'editMessageText') {
        if (!body.chat_id || !body.message_id || !body.text)
          return send(400, { ok: false, error_code: 400, description: 'Bad Request: message to edit not found' });
        return send(200, { ok: true, result: { message_id: body.message_id, chat: { id: body.chat_id } } });
      }
      if (method === 'answerCallbackQuery') return send(200, { ok: true, result: true });
      if (method === 'getUpdates') {
        const q = queue(token);
        if (q.polling) {
          conflicts++;
          return send(409, {
            ok: false,
            error_code: 409,
            description: 'Conflict: terminated by other getUpdates request',
          });
        }
        const offset = Number(body.offset ?? 0);
        q.updates = q.updates.filter((u) => u.update_id >= offset);
        const answer = () => {
          q.polling = false;
          send(200, { ok: true, result: q.updates.slice(0, 100) });
        };
        if (q.updates.length || !body.timeout) return answer();
        q.polling = true;
        const timer = setTimeout(finish, Math.min(Number(body.timeout), 50) * 1000);
        function finish() {
          clearTimeout(timer);
          q.waiters = q.waiters.filter((w) => w !== finish);
          answer();
        }
        q.waiters.push(finish);
        res.on('close', () => {
          if (!res.writableEnded) {
            clearTimeout(timer);
            q.waiters = q.waiters.filter((w) => w !== finish);
            q.polling = false;
          }
        });
        return;
      }
      return send(404, { ok: false, error_code: 404, description: 'Not Found' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const push = (token: string, fields: Record<string, unknown>) => {
    const q = queue(token);
    const update = { update_id: q.nextId++, ...fields };
    q.updates.push(update);
    q.history.push(update);
    for (const w of q.waiters.splice(0)) w();
    return update.update_id;
  };
  let messageId = 1000;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    /** Register another valid token. */
    addBot: (token: string, bot: { id: number; username: string }) => (bots[token] = bot),
    /**
     * A text message from chat `chatId` to the bot of `token` (`opts.replyTo`: the id of the message it answers;
     * `opts.fromId`: the sender, the chat itself by default). @returns its update id.
     */
    pushMessage: (
      token: string,
      chatId: string | number,
      text: string,
      opts: { replyTo?: number; fromId?: number } = {},
    ) =>
      push(token, {
        message: {
          message_id: ++messageId,
          date: Math.floor(Date.now() / 1000),
          chat: { id: Number(chatId), type: Number(chatId) < 0 ? 'group' : 'private' },
          from: {
            id: opts.fromId ?? Number(chatId),
            is_bot: false,
            first_name: 'User',
            username: `user${opts.fromId ?? chatId}`,
          },
          text,
          ...(opts.replyTo ? { reply_to_message: { message_id: opts.replyTo, chat: { id: Number(chatId) } } } : {}),
        },
      }),
    /**
     * A press on an inline button carrying `data`, in chat `chatId` (`opts.messageId`: the message of the button;
     * `opts.fromId`: who pressed, the chat itself by default). @returns its update id.
     */
    pushCallback: (
      token: string,
      chatId: string | number,
      data: string,
      opts: { messageId?: number; fromId?: number } = {},
    ) =>
      push(token, {
        callback_query: {
          id: String(++messageId),
          from: { id: opts.fromId ?? Number(chatId), is_bot: false, first_name: 'User' },
          message: {
            message_id: opts.messageId ?? messageId,
            chat: { id: Number(chatId), type: Number(chatId) < 0 ? 'group' : 'private' },
            text: '…',
          },
          data,
        },
      }),
    /** Deliver update `updateId` again (as a messenger that never got the acknowledgement would). */
    redeliver: (token: string, updateId: number) => {
      const q = queue(token);
      const u = q.history.find((h) => h.update_id === updateId);
      if (u) q.updates = [u, ...q.updates.filter((x) => x.update_id !== updateId)];
    },
    /** Every later call with this token answers 401. */
    revoke: (token: string) => revoked.add(token),
    /** The next `n` calls with this token answer 429 `retry_after`. */
    flood: (token: string, retryAfter: number, n = 1) => floods.set(token, { retryAfter, n }),
    /** How many getUpdates calls were refused because another was in flight for the same token. */
    conflicts: () => conflicts,
    /** The messages sent to chat `chatId` (texts, in order). */
    sentTo: (chatId: string | number) =>
      calls.filter((c) => c.method === 'sendMessage' && String(c.body.chat_id) === String(chatId)),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
