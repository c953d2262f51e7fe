/**
 * The messenger area's port for the workers area: bind, unbind and worker deletion reach the bot pollers of every
 * instance, and binding can wait until an instance polls the bot.
 */
import type { Bus } from '../../lib/bus.ts';
import type { MessengerRepo } from './messenger.repo.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * What the workers area tells the pollers: a bot was bound, unbound or its worker deleted (`changed`, over the
 * bus so every instance reconciles at once), and whether bot `botId` is polled now (`started`, waiting up to
 * `waitMs` for an instance to take it).
 */
export function createBotPollerPort(deps: { repo: Pick<MessengerRepo, 'polling'>; bus: Pick<Bus, 'publish'> }) {
  return {
    async changed(workerId: number): Promise<void> {
      await deps.bus.publish('messenger.bots', { worker_id: workerId });
    },
    async started(botId: string, waitMs = 3000): Promise<boolean> {
      const until = Date.now() + waitMs;
      for (;;) {
        if (await deps.repo.polling(botId)) return true;
        if (Date.now() >= until) return false;
        await sleep(50);
      }
    },
  };
}
export type BotPollerPort = ReturnType<typeof createBotPollerPort>;
