/**
 * Binding a messenger bot token to a worker: validated with `getMe` before any transaction (no network
 * inside a transaction), stored sealed with the bot's id and username; one bot serves one worker.
 */
import type { Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { BadRequest, Conflict, Upstream } from '../../http/errors.ts';
import type { Sealer } from '../../secrets/crypto.ts';
import type { WorkersRepo } from './workers.repo.ts';
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
 * Store the sealed token on the worker, through the workers repository; inside a transaction pass it as `tx`.
 * @throws Conflict 409 `bot_already_bound` when this bot is bound to another worker.
 */
export async function bindBot(
  repo: Pick<WorkersRepo, 'botHolder' | 'setBot'>,
  sealer: Sealer,
  workerId: number,
  token: string,
  bot: BotIdentity,
  tx?: Transaction<DB>,
): Promise<void> {
  if (await repo.botHolder(bot.id, workerId, tx))
    throw new Conflict('bot_already_bound', 'This bot is already bound to another worker.');
  try {
    await repo.setBot(workerId, { tokenEnc: sealer.seal(token.trim()), botId: bot.id, username: bot.username }, tx);
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
