/**
 * The bot-API vendor: `{base}/bot{token}/getMe`, `/sendMessage`, `/editMessageText`, `/answerCallbackQuery`
 * and `/getUpdates` (long
 * polling) over fetch.
 * The base URL is `MESSENGER_API_URL` (`deps.config.messengerApiUrl`); tests point it at a local stand-in.
 * Errors never include the token (it is part of the URL, so URLs are never logged or thrown).
 */
import { type BotUpdate, MessengerFlood, MessengerRevoked, MessengerUnavailable, type Messenger } from './messenger.ts';

const TIMEOUT_MS = 8000;

/** A token must look like a bot token before it is put into a URL (`<digits>:<base64url-ish>`). */
export const BOT_TOKEN_PATTERN = /^[0-9]{3,20}:[A-Za-z0-9_-]{20,100}$/;

export function createBotApiMessenger(baseUrl: string): Messenger {
  const base = baseUrl.replace(/\/+$/, '');
  async function call(
    token: string,
    method: string,
    body?: unknown,
    opts: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<{ status: number; json: any }> {
    let res: Response;
    const timeout = AbortSignal.timeout(opts.timeoutMs ?? TIMEOUT_MS);
    try {
      res = await fetch(`${base}/bot${token}/${method}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout,
      });
    } catch (err) {
      if (opts.signal?.aborted) throw new MessengerUnavailable('aborted');
      throw new MessengerUnavailable((err as Error).name === 'TimeoutError' ? 'timeout' : 'network error');
    }
    let json: any;
    try {
      json = await res.json();
    } catch {
      json = undefined;
    }
    return { status: res.status, json };
  }
  return {
    async getMe(token) {
      if (!BOT_TOKEN_PATTERN.test(token)) return undefined;
      const { status, json } = await call(token, 'getMe');
      if (status >= 500) throw new MessengerUnavailable(`status ${status}`);
      if (status !== 200 || !json?.ok || !json.result?.id) return undefined;
      return { id: String(json.result.id), username: String(json.result.username ?? '') };
    },
    async sendMessage(token, msg) {
      const body: Record<string, unknown> = { chat_id: msg.chatId, text: msg.text };
      if (msg.buttons?.length) body.reply_markup = { inline_keyboard: msg.buttons };
      const { status, json } = await call(token, 'sendMessage', body);
      if (status !== 200 || !json?.ok) throw failure('sendMessage', status, json);
      const id = Number(json.result?.message_id);
      return { messageId: Number.isSafeInteger(id) ? id : 0 };
    },
    async editMessageText(token, msg) {
      const { status, json } = await call(token, 'editMessageText', {
        chat_id: msg.chatId,
        message_id: msg.messageId,
        text: msg.text,
        reply_markup: { inline_keyboard: [] },
      });
      if (status !== 200 || !json?.ok) throw failure('editMessageText', status, json);
    },
    async answerCallbackQuery(token, callbackId, text) {
      const { status, json } = await call(token, 'answerCallbackQuery', {
        callback_query_id: callbackId,
        ...(text ? { text: text.slice(0, 200) } : {}),
      });
      if (status !== 200 || !json?.ok) throw failure('answerCallbackQuery', status, json);
    },
    async getUpdates(token, q) {
      if (!BOT_TOKEN_PATTERN.test(token)) throw new MessengerRevoked();
      const body = { offset: q.offset, timeout: q.timeoutS, allowed_updates: ['message', 'callback_query'] };
      const { status, json } = await call(token, 'getUpdates', body, {
        timeoutMs: q.timeoutS * 1000 + TIMEOUT_MS,
        signal: q.signal,
      });
      if (status !== 200 || !json?.ok || !Array.isArray(json.result)) throw failure('getUpdates', status, json);
      return (json.result as any[]).flatMap((u) => toUpdate(u));
    },
  };
}

/** A non-ok answer as the error it means (401 revoked, 429 flood with `parameters.retry_after`). */
function failure(method: string, status: number, json: any): MessengerUnavailable {
  if (status === 401) return new MessengerRevoked();
  if (status === 429) {
    const after = Number(json?.parameters?.retry_after);
    return new MessengerFlood(Number.isFinite(after) && after > 0 ? Math.min(after, 3600) : 5);
  }
  return new MessengerUnavailable(`${method} status ${status}`);
}

/** One update of the bot API as the service reads it; other kinds keep only their id (skipped, not lost). */
function toUpdate(u: any): BotUpdate[] {
  const id = Number(u?.update_id);
  if (!Number.isSafeInteger(id)) return [];
  const msg = u.message;
  const num = (v: unknown) =>
    Number.isSafeInteger(Number(v)) && v !== null && v !== undefined ? Number(v) : undefined;
  if (msg?.chat?.id !== undefined && typeof msg.text === 'string')
    return [
      {
        update_id: id,
        message: {
          chatId: String(msg.chat.id),
          text: msg.text,
          fromUsername: msg.from?.username ?? undefined,
          fromId: msg.from?.id !== undefined ? String(msg.from.id) : undefined,
          replyTo: num(msg.reply_to_message?.message_id),
        },
      },
    ];
  const cb = u.callback_query;
  if (cb?.message?.chat?.id !== undefined && typeof cb.data === 'string')
    return [
      {
        update_id: id,
        callback: {
          id: String(cb.id),
          chatId: String(cb.message.chat.id),
          data: cb.data,
          fromId: cb.from?.id !== undefined ? String(cb.from.id) : undefined,
          messageId: num(cb.message.message_id),
        },
      },
    ];
  return [{ update_id: id }];
}
