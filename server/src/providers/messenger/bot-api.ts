/**
 * The bot-API vendor: `{base}/bot{token}/getMe` and `/sendMessage` over fetch.
 * The base URL is `MESSENGER_API_URL` (`deps.config.messengerApiUrl`); tests point it at a local stand-in.
 * Errors never include the token (it is part of the URL, so URLs are never logged or thrown).
 */
import { MessengerUnavailable, type Messenger } from './messenger.ts';

const TIMEOUT_MS = 8000;

/** A token must look like a bot token before it is put into a URL (`<digits>:<base64url-ish>`). */
export const BOT_TOKEN_PATTERN = /^[0-9]{3,20}:[A-Za-z0-9_-]{20,100}$/;

export function createBotApiMessenger(baseUrl: string): Messenger {
  const base = baseUrl.replace(/\/+$/, '');
  async function call(token: string, method: string, body?: unknown): Promise<{ status: number; json: any }> {
    let res: Response;
    try {
      res = await fetch(`${base}/bot${token}/${method}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (err) {
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
      if (status !== 200 || !json?.ok) throw new MessengerUnavailable(`sendMessage status ${status}`);
    },
  };
}
