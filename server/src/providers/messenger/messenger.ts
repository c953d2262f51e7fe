/**
 * The messenger seen from the service (the bot API at `MESSENGER_API_URL`): validate a bot
 * token and send a message through a bot. The vendor file (`bot-api.ts`) speaks the bot API over HTTP.
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
   * @throws MessengerUnavailable on a network failure or any non-ok answer.
   */
  sendMessage(token: string, msg: { chatId: string; text: string; buttons?: InlineButton[][] }): Promise<void>;
}

/** The messenger could not be reached or refused the call; carries no token. */
export class MessengerUnavailable extends Error {
  constructor(readonly detail: string) {
    super(`messenger unavailable: ${detail}`);
  }
}
