/**
 * Binding a messenger bot token to a worker: validated with `getMe` before any transaction (no network
 * inside a transaction), stored sealed with the bot's id and username; one bot serves one worker.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { BadRequest, Conflict, Upstream } from '../../http/errors.ts';
import type { Sealer } from '../../secrets/crypto.ts';
import { MessengerUnavailable, type BotIdentity, type Messenger } from '../../providers/messenger/messenger.ts';

/**
 * Ask the messenger who this token is.
 * @throws BadRequest 400 `invalid_bot_token` when the messenger rejects it; Upstream 502 `messenger_unavailable`.
 */
export async function validateBotToken(messenger: Messenger, token: string): Promise<BotIdentity> {
  let bot: BotIdentity | undefined;
  try {
    bot = await messenger.getMe(token.trim());
  } catch (err) {
    if (err instanceof MessengerUnavailable)
      throw new Upstream(502, 'messenger_unavailable', 'The messenger service could not be reached; try again later.');
    throw err;
  }
  if (!bot) throw new BadRequest('invalid_bot_token', 'The messenger rejected this bot token.');
  return bot;
}

/**
 * Store the sealed token on the worker.
 * @throws Conflict 409 `bot_already_bound` when this bot is bound to another worker.
 */
export async function bindBot(
  tx: Transaction<DB> | Kysely<DB>,
  sealer: Sealer,
  workerId: number,
  token: string,
  bot: BotIdentity,
): Promise<void> {
  const other = await tx
    .selectFrom('workers')
    .select('id')
    .where('messenger_bot_id', '=', bot.id)
    .where('id', '!=', workerId)
    .executeTakeFirst();
  if (other) throw new Conflict('bot_already_bound', 'This bot is already bound to another worker.');
  try {
    await tx
      .updateTable('workers')
      .set({
        messenger_token_enc: sealer.seal(token.trim()),
        messenger_bot_id: bot.id,
        messenger_bot_username: bot.username,
        updated_at: new Date(),
      })
      .where('id', '=', workerId)
      .execute();
  } catch (err) {
    if ((err as { code?: string }).code === '23505')
      throw new Conflict('bot_already_bound', 'This bot is already bound to another worker.');
    throw err;
  }
}

/** `123456:ABCDEF…` → `123456:••••WXYZ` (the bot id and the last 4 characters only). */
export function maskBotToken(token: string): string {
  const [id] = token.split(':');
  return `${id}:••••${token.slice(-4)}`;
}
