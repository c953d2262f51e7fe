/**
 * The messenger seen from the service (the bot API at `MESSENGER_API_URL`): validate a bot
 * token, send a message through a bot, acknowledge a button press, and receive its updates by long polling. The vendor file
 * (`bot-api.ts`) speaks the bot API over HTTP.
 */

export interface BotIdentity {
  /** The bot's numeric id, as a string (ids exceed 2^31). */
  id: string;
  username: string;
}

export interface InlineButton {
  text: string;
  url?: string;
  callback_data?: string;
}

export interface Messenger {
  /**
   * `getMe` with this token.
   * @returns the bot, or undefined when the messenger rejects the token (401/404 or `ok:false`).
   * @throws MessengerUnavailable when the messenger cannot be reached or answers 5xx.
   */
  getMe(token: string): Promise<BotIdentity | undefined>;
  /**
   * `sendMessage` `{chat_id, text, reply_markup?}` through the bot of `token`.
   * @returns the sent message's id in its chat (0 when the messenger does not say).
   * @throws MessengerUnavailable on a network failure or any non-ok answer.
   */
  sendMessage(
    token: string,
    msg: { chatId: string; text: string; buttons?: InlineButton[][] },
  ): Promise<{ messageId: number }>;
  /**
   * `editMessageText` `{chat_id, message_id, text, reply_markup}`: replace the text of a message the bot sent;
   * its inline buttons are removed.
   * @throws MessengerUnavailable on a network failure or any non-ok answer.
   */
  editMessageText(token: string, msg: { chatId: string; messageId: number; text: string }): Promise<void>;
  /**
   * `answerCallbackQuery` `{callback_query_id, text?}`: acknowledge a press on an inline button, so the messenger
   * stops showing it as pending (`text`: a short notice shown to the person who pressed).
   * @throws MessengerUnavailable on a network failure or any non-ok answer.
   */
  answerCallbackQuery(token: string, callbackId: string, text?: string): Promise<void>;
  /**
   * `getUpdates` `{offset, timeout, allowed_updates}` (long polling): waits up to `timeoutS` seconds for updates
   * with an id of at least `offset`; the messenger forgets updates below the offset it was last asked for.
   * @param signal aborts the wait (the poller stops).
   * @returns the updates, oldest first (possibly none).
   * @throws MessengerRevoked on 401 (the token was revoked), MessengerFlood on 429 (`retryAfterS`),
   *   MessengerUnavailable on anything else that is not ok.
   */
  getUpdates(token: string, q: { offset: number; timeoutS: number; signal?: AbortSignal }): Promise<BotUpdate[]>;
}

/**
 * One incoming update: a text message (`replyTo`: the id of the message it answers), or a press on an inline
 * button (`callback`; `messageId`: the message the button belongs to). `fromId`: the sender's user id (in a
 * private chat, the chat id).
 */
export interface BotUpdate {
  update_id: number;
  message?: { chatId: string; text: string; fromUsername?: string; fromId?: string; replyTo?: number };
  callback?: { id: string; chatId: string; data: string; fromId?: string; messageId?: number };
}

/** The messenger could not be reached or refused the call; carries no token. */
export class MessengerUnavailable extends Error {
  constructor(readonly detail: string) {
    super(`messenger unavailable: ${detail}`);
  }
}

/** The messenger answered 401: the bot token is no longer valid. */
export class MessengerRevoked extends MessengerUnavailable {
  constructor() {
    super('unauthorized');
  }
}

/** The messenger answered 429: wait `retryAfterS` seconds before the next call with this token. */
export class MessengerFlood extends MessengerUnavailable {
  constructor(readonly retryAfterS: number) {
    super(`flood limit, retry after ${retryAfterS} s`);
  }
}
