/**
 * Messenger workers that answer: every worker with a bound bot is polled with `getUpdates` (long polling) by
 * exactly one instance, the holder of the bot's lease in `messenger_pollers` (renewed every 2 s; taken over by
 * another instance when it expires). Each handled update is recorded in `messenger_updates`, and the offset moved
 * past it, in the same transaction as what the update caused, so no update is handled twice or lost across a
 * restart.
 *
 * - A message from the project owner's linked chat is a message to the worker through the runtime's submit
 *   (a durable, metered, capped run; event `messenger_message`); the reply is sent when the run ends (run events
 *   over the bus, and a sweep for replies whose event was missed), split at the messenger's limit, a closing
 *   numbered choice offered as inline buttons. A press on a button is a message with the button's text.
 * - Commands: `/start` (with a one-time code: links the chat to the account that made the code), `/help`,
 *   `/status` (the worker's runtime), `/issues` (open issues). Anyone else gets one short refusal.
 * - A revoked token (401) unbinds the bot, records `worker_bot_revoked` and e-mails the owner; a flood limit
 *   (429 `retry_after`) is waited out.
 */
import crypto from 'node:crypto';
import type { Access } from '../../access/access.ts';
import type { Actor, UserCache } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import type { ActivityLog } from '../../lib/activity.ts';
import type { Bus } from '../../lib/bus.ts';
import type { Mailer } from '../../providers/mail/mail.ts';
import {
  type BotUpdate,
  type InlineButton,
  type Messenger,
  MessengerFlood,
  MessengerRevoked,
  MessengerUnavailable,
} from '../../providers/messenger/messenger.ts';
import type { Sealer } from '../../secrets/crypto.ts';
import type { AccountsRepo } from '../accounts/accounts.repo.ts';
import type { IssuesService } from '../issues/issues.service.ts';
import type { RunEvents } from '../runtime/events.ts';
import type { RuntimeRepo } from '../runtime/runtime.repo.ts';
import type { RuntimeService } from '../runtime/runtime.service.ts';
import type { WorkersRepo } from '../workers/workers.repo.ts';
import type { WorkersService } from '../workers/workers.service.ts';
import { choiceButtons, parseCommand, splitMessage } from './messenger.rules.ts';
import { type MessengerRepo, UpdateAlreadyHandled } from './messenger.repo.ts';

/** How often each instance reconciles its pollers with the bound bots and renews its leases (ms). */
export const RECONCILE_MS = 2000;
/** How long a link code stays valid (ms). */
export const LINK_CODE_TTL_MS = 15 * 60 * 1000;
/** Handled updates and sent replies are kept this many days (a restart within them re-handles nothing). */
const KEEP_DAYS = 30;
/** How long `stop` waits for a reconciliation or poller under way (ms). */
const STOP_WAIT_MS = 3000;
/** A reply's sendMessage is retried at most this many times after a flood limit. */
const SEND_RETRIES = 3;

const REFUSAL = 'Sorry, this bot answers its owner only.';

/** What the messenger area uses. */
export interface MessengerDeps {
  repo: MessengerRepo;
  /** Bound bots and unbinding a revoked one (the workers area's repository). */
  bots: Pick<WorkersRepo, 'boundBots' | 'clearBotIf'>;
  /** The worker's runtime for `/status` (the workers area). */
  workers: Pick<WorkersService, 'runtime'>;
  /** Open issues for `/issues`. */
  issues: Pick<IssuesService, 'list'>;
  /** Messages to workers go through the runtime's submit; run events tell when the reply is ready. */
  runtime: Pick<RuntimeService, 'submit'>;
  events: RunEvents;
  /** The run and its reply text. */
  runs: Pick<RuntimeRepo, 'run' | 'messageContent'>;
  /** Linking a chat fills the account's chat id. */
  accounts: Pick<AccountsRepo, 'setChatId'>;
  userCache: Pick<UserCache, 'changed'>;
  access: Pick<Access, 'ownerActor'>;
  activity: ActivityLog;
  mailer: Mailer;
  messenger: Messenger;
  sealer: Sealer;
  bus: Pick<Bus, 'publish' | 'subscribe'>;
  appUrl: string;
  options: { timeoutS: number; leaseMs: number };
  /** This process's instance id (crash recovery): its pollers' leases name it, so they are freed when it dies. */
  instanceId?: string;
  log: { info(o: object, m: string): void; warn(o: object, m: string): void; error(o: object, m: string): void };
}

type BoundBot = Awaited<ReturnType<MessengerDeps['bots']['boundBots']>>[number];

interface Loop {
  bot: BoundBot;
  abort: AbortController;
  done: Promise<void>;
}

const sha256 = (s: string) => crypto.createHash('sha256').update(s).digest('hex');
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/** The lease owner of an instance's pollers. */
const leaseOwner = (instanceId: string) => `messenger-${instanceId}`;

/** An account is linked to a messenger chat once its chat id is not the default (its own id as a string). */
const linkedChat = (owner: Pick<Actor, 'id' | 'chat_id'>) =>
  owner.chat_id && owner.chat_id !== String(owner.id) ? owner.chat_id : undefined;

/** The messenger area (module header); built once by the composition root, started by its lifecycle. */
export function createMessengerService(deps: MessengerDeps) {
  const { repo, log } = deps;
  const instanceId = leaseOwner(deps.instanceId ?? crypto.randomUUID());
  /** The pollers this instance runs, by bot id. */
  const loops = new Map<string, Loop>();
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let reconciling: Promise<void> | undefined;
  let again = false;
  let lastPrune = 0;

  // Another instance bound or unbound a bot: look now rather than at the next tick.
  deps.bus.subscribe('messenger.bots', () => {
    if (running) void reconcile();
  });

  /** Send `text` to `chatId` through `token`, split at the limit; waits out flood limits (a few times). */
  async function send(token: string, chatId: string, text: string, buttons?: InlineButton[][]): Promise<void> {
    const parts = splitMessage(text.trim() || '(no reply)');
    for (let i = 0; i < parts.length; i++) {
      const last = i === parts.length - 1;
      for (let attempt = 0; ; attempt++) {
        try {
          await deps.messenger.sendMessage(token, {
            chatId,
            text: parts[i],
            buttons: last ? buttons : undefined,
          });
          break;
        } catch (err) {
          if (err instanceof MessengerFlood && attempt < SEND_RETRIES) {
            await sleep(Math.min(err.retryAfterS, 60) * 1000);
            continue;
          }
          throw err;
        }
      }
    }
  }

  /** The bot's token was revoked: unbind it (once), record the event and tell the owner by e-mail. */
  async function revoked(bot: BoundBot): Promise<void> {
    if (!(await deps.bots.clearBotIf(bot.worker_id, bot.bot_id))) return;
    const { actor: owner, projectName } = await deps.access.ownerActor(bot.project_id);
    const name = bot.bot_username ? `@${bot.bot_username}` : 'The bot';
    await deps.activity.recordBestEffort({
      type: 'worker_bot_revoked',
      userId: owner.id,
      actor: 'messenger',
      projectId: bot.project_id,
      workerId: bot.worker_id,
      title: `${name} was unbound: the messenger revoked its token`,
      payload: { bot_username: bot.bot_username },
    });
    await deps.mailer.send({
      to: owner.email,
      subject: `The bot of worker ${bot.label} was unbound`,
      text:
        `${name}, the bot of worker ${bot.label} in project ${projectName}, stopped working: the messenger ` +
        `says its token is no longer valid (it was revoked or regenerated). Bind a new token on the worker's ` +
        `page to receive messages again: ${deps.appUrl}/projects/${encodeURIComponent(projectName)}`,
      kind: 'bot_revoked',
    });
    await deps.bus.publish('messenger.bots', { worker_id: bot.worker_id });
    log.warn({ worker_id: bot.worker_id }, 'messenger bot unbound: token revoked');
  }

  /**
   * Record update `u` as handled (no run), then answer `text` to its chat. A message already handled
   * elsewhere is answered by nobody a second time.
   */
  async function answerOnly(bot: BoundBot, u: BotUpdate, chatId: string, kind: string, text: string, token: string) {
    try {
      await repo.transaction((tx) =>
        repo.claimUpdate(tx, { botId: bot.bot_id, updateId: u.update_id, workerId: bot.worker_id, chatId, kind }),
      );
    } catch (err) {
      if (err instanceof UpdateAlreadyHandled) return;
      throw err;
    }
    await send(token, chatId, text);
  }

  /** `/start <code>`: link this chat to the account of the code. */
  async function link(bot: BoundBot, u: BotUpdate, chatId: string, code: string, token: string) {
    let userId: number | undefined;
    try {
      userId = await repo.transaction(async (tx) => {
        await repo.claimUpdate(tx, {
          botId: bot.bot_id,
          updateId: u.update_id,
          workerId: bot.worker_id,
          chatId,
          kind: 'link',
        });
        const id = await repo.useLinkCode(tx, sha256(code.toUpperCase()));
        if (id !== undefined) await deps.accounts.setChatId(tx, id, chatId);
        return id;
      });
    } catch (err) {
      if (err instanceof UpdateAlreadyHandled) return;
      throw err;
    }
    if (userId === undefined) {
      await send(token, chatId, 'This code is not valid or has expired. Make a new one on your account page.');
      return;
    }
    await deps.userCache.changed(userId);
    await deps.activity.recordBestEffort({
      type: 'messenger_chat_linked',
      userId,
      actor: 'messenger',
      projectId: bot.project_id,
      workerId: bot.worker_id,
      title: 'Messenger chat linked to the account',
    });
    await send(
      token,
      chatId,
      `This chat is now linked to your account. Write to ${bot.label} here; /help lists commands.`,
    );
  }

  /** The text of a command from the owner. */
  async function commandText(bot: BoundBot, owner: Actor, projectName: string, command: string): Promise<string> {
    if (command === 'status') {
      const r = await deps.workers.runtime(owner, projectName, bot.worker_id);
      const cap = r.tokens_cap === null ? 'no daily cap' : `${r.tokens_pct}% of ${r.tokens_cap}`;
      const skill = r.current_skill ? `, skill ${r.current_skill}` : '';
      return `${bot.label}: ${r.status}${skill}. Tokens today: ${r.tokens_today} (${cap}).`;
    }
    if (command === 'issues') {
      const { issues, total } = await deps.issues.list(owner, projectName, { status: 'open', limit: 10 });
      if (!issues.length) return `No open issues in ${projectName}.`;
      const lines = issues.map((i) => `#${i.id} ${i.title} (${i.priority})`);
      return `Open issues in ${projectName} (${total}):\n${lines.join('\n')}`;
    }
    return (
      `I am ${bot.label}, a worker of project ${projectName}. Write to me and I answer here.\n` +
      `/status — what I am doing and my tokens today\n/issues — the open issues\n/help — this list`
    );
  }

  /** Handle one update of `bot` (exactly once across instances and restarts). */
  async function handle(bot: BoundBot, token: string, u: BotUpdate): Promise<void> {
    const incoming = u.message
      ? { chatId: u.message.chatId, text: u.message.text }
      : u.callback
        ? { chatId: u.callback.chatId, text: u.callback.data }
        : undefined;
    if (!incoming) {
      // Another kind of update: skipped, but recorded so the offset moves past it.
      try {
        await repo.transaction((tx) =>
          repo.claimUpdate(tx, {
            botId: bot.bot_id,
            updateId: u.update_id,
            workerId: bot.worker_id,
            chatId: null,
            kind: 'ignored',
          }),
        );
      } catch (err) {
        if (!(err instanceof UpdateAlreadyHandled)) throw err;
      }
      return;
    }
    const { chatId, text } = incoming;
    // A button press is acknowledged at once (best effort) so the messenger stops showing it as pending.
    if (u.callback)
      await deps.messenger.answerCallbackQuery(token, u.callback.id).catch((err: Error) => {
        deps.log.warn({ bot_id: bot.bot_id, err: err.message }, 'answerCallbackQuery failed');
      });
    const cmd = parseCommand(text);
    if (cmd?.command === 'start' && cmd.arg) return link(bot, u, chatId, cmd.arg.slice(0, 64), token);
    const { actor: owner, projectName } = await deps.access.ownerActor(bot.project_id);
    if (linkedChat(owner) !== chatId) {
      const text =
        cmd?.command === 'start'
          ? `${REFUSAL} If this is your bot, link this chat with the code from your account page: /start <code>`
          : REFUSAL;
      return answerOnly(bot, u, chatId, 'refused', text, token);
    }
    if (cmd) {
      let reply: string;
      try {
        reply = await commandText(bot, owner, projectName, cmd.command);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        reply = err.message;
      }
      return answerOnly(bot, u, chatId, 'command', reply, token);
    }
    // A message to the worker: the run, the reply owed and the handled update commit together.
    let unsubscribe: (() => void) | undefined;
    try {
      await deps.runtime.submit(
        owner,
        projectName,
        { worker_id: bot.worker_id, text },
        {
          eventType: 'messenger_message',
          beforeCommit: async ([runId], tx) => {
            await repo.claimUpdate(tx, {
              botId: bot.bot_id,
              updateId: u.update_id,
              workerId: bot.worker_id,
              chatId,
              kind: 'message',
              runId,
            });
            await repo.addReply(tx, { runId, projectId: bot.project_id, workerId: bot.worker_id, chatId });
            unsubscribe = deps.events.subscribe(runId, (e) => {
              if (e.type !== 'end') return;
              unsubscribe?.();
              void deliver(runId).catch((err) => log.warn({ err, run_id: runId }, 'messenger reply failed'));
            });
          },
        },
      );
    } catch (err) {
      unsubscribe?.();
      if (err instanceof UpdateAlreadyHandled) return;
      // Refused before any run (budget spent, no key, no model): the owner reads why.
      if (err instanceof AppError) return answerOnly(bot, u, chatId, 'refused_run', err.message, token);
      throw err;
    }
  }

  /**
   * Send the reply of run `runId` to the chat that asked, once, when the run has ended.
   * @returns whether it was sent by this call.
   */
  async function deliver(runId: number): Promise<boolean> {
    const pending = await repo.pendingReply(runId);
    if (!pending) return false;
    const run = await deps.runs.run(pending.project_id, runId);
    if (run && (run.status === 'queued' || run.status === 'running')) return false;
    if (!(await repo.claimReply(runId))) return false;
    const bot = (await deps.bots.boundBots()).find((b) => b.worker_id === pending.worker_id);
    if (!bot || !run) return false;
    let text: string;
    if (run.status === 'succeeded')
      text = run.reply_message_id ? ((await deps.runs.messageContent(run.reply_message_id)) ?? '') : '';
    else if (run.status === 'cancelled') text = 'The run was cancelled.';
    else text = `I could not finish: ${run.error_message ?? run.error ?? 'the run failed'}.`;
    const token = deps.sealer.open(bot.token_enc);
    try {
      await send(token, pending.chat_id, text || '(no reply)', choiceButtons(text));
    } catch (err) {
      if (err instanceof MessengerRevoked) await revoked(bot);
      else throw err;
    }
    return true;
  }

  /** Poll `bot` while this instance holds its lease and the binding is unchanged. */
  async function poll(bot: BoundBot, signal: AbortSignal): Promise<void> {
    let token: string;
    try {
      token = deps.sealer.open(bot.token_enc);
    } catch {
      log.warn({ worker_id: bot.worker_id }, 'messenger bot token cannot be unsealed; not polling');
      return;
    }
    let backoff = 1000;
    while (!signal.aborted) {
      let updates: BotUpdate[];
      try {
        const offset = await repo.offset(bot.bot_id);
        updates = await deps.messenger.getUpdates(token, { offset, timeoutS: deps.options.timeoutS, signal });
        backoff = 1000;
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof MessengerRevoked) {
          await revoked(bot).catch((e) => log.error({ err: e }, 'unbinding a revoked bot failed'));
          return;
        }
        if (err instanceof MessengerFlood) {
          await sleep(err.retryAfterS * 1000, signal);
          continue;
        }
        if (!(err instanceof MessengerUnavailable)) log.warn({ err, worker_id: bot.worker_id }, 'getUpdates failed');
        await sleep(backoff, signal);
        backoff = Math.min(backoff * 2, 30_000);
        continue;
      }
      for (const u of updates) {
        if (signal.aborted) return;
        try {
          await handle(bot, token, u);
        } catch (err) {
          if (err instanceof MessengerRevoked) {
            await revoked(bot).catch((e) => log.error({ err: e }, 'unbinding a revoked bot failed'));
            return;
          }
          // Not handled: the offset stays, so the update comes again with the next poll.
          log.warn({ err, worker_id: bot.worker_id, update_id: u.update_id }, 'messenger update not handled');
          await sleep(backoff, signal);
          backoff = Math.min(backoff * 2, 30_000);
          break;
        }
      }
    }
  }

  function startLoop(bot: BoundBot): void {
    const abort = new AbortController();
    const loop: Loop = { bot, abort, done: Promise.resolve() };
    loop.done = (async () => {
      try {
        await poll(bot, abort.signal);
      } catch (err) {
        log.error({ err, worker_id: bot.worker_id }, 'messenger poller stopped');
      } finally {
        if (loops.get(bot.bot_id) === loop) loops.delete(bot.bot_id);
        await repo.release(bot.bot_id, instanceId).catch(() => {});
      }
    })();
    loops.set(bot.bot_id, loop);
  }

  /** One reconciliation: stop pollers of unbound bots, renew leases, start pollers of free bots, send owed replies. */
  async function reconcileOnce(): Promise<void> {
    const bound = await deps.bots.boundBots();
    const byBot = new Map(bound.map((b) => [b.bot_id, b]));
    for (const [botId, loop] of loops) {
      const now = byBot.get(botId);
      if (!now || now.worker_id !== loop.bot.worker_id || now.token_enc !== loop.bot.token_enc) {
        loop.abort.abort();
        loops.delete(botId);
        await loop.done;
      }
    }
    const held = await repo.renew([...loops.keys()], instanceId, deps.options.leaseMs);
    for (const [botId, loop] of loops)
      if (!held.includes(botId)) {
        loop.abort.abort();
        loops.delete(botId);
      }
    for (const b of bound) {
      if (!running) return;
      if (loops.has(b.bot_id)) continue;
      const offset = await repo.acquire(b.bot_id, b.worker_id, instanceId, deps.options.leaseMs);
      if (offset !== undefined) startLoop(b);
    }
    for (const r of await repo.pendingReplies(20)) await deliver(r.run_id);
    if (Date.now() - lastPrune > 3600_000) {
      lastPrune = Date.now();
      await repo.prune(KEEP_DAYS);
    }
  }

  /** Reconcile now; a request during a reconciliation runs one more right after it. */
  function reconcile(): Promise<void> {
    if (reconciling) {
      again = true;
      return reconciling;
    }
    reconciling = (async () => {
      try {
        do {
          again = false;
          await reconcileOnce();
        } while (again && running);
      } catch (err) {
        log.warn({ err }, 'messenger reconciliation failed');
      } finally {
        reconciling = undefined;
      }
    })();
    return reconciling;
  }

  return {
    /**
     * Crash recovery: free the pollers' leases of the instances found dead (`instanceIds`) and reconcile at once,
     * so their bots are polled again now instead of when the leases lapse.
     */
    async takeOver(instanceIds: string[]): Promise<void> {
      const freed = await repo.releaseOwners(instanceIds.map(leaseOwner));
      if (freed) log.info({ bots: freed }, 'messenger pollers of dead instances freed');
      if (running) await reconcile();
    },

    /** Start polling the bound bots this instance can lease, then keep reconciling every 2 s. */
    async start(): Promise<void> {
      running = true;
      await reconcile();
      timer = setInterval(() => void reconcile(), RECONCILE_MS);
      timer.unref();
    },

    /**
     * Stop every poller of this instance and give up its leases (another instance takes them at once). Waits at
     * most STOP_WAIT_MS for work under way (a database that is already gone must not hold the shutdown).
     */
    async stop(): Promise<void> {
      running = false;
      if (timer) clearInterval(timer);
      const all = [...loops.values()];
      for (const l of all) l.abort.abort();
      await Promise.race([Promise.all([reconciling, ...all.map((l) => l.done)]), sleep(STOP_WAIT_MS)]);
      for (const l of loops.values()) l.abort.abort();
      loops.clear();
    },

    /**
     * `POST /account/messenger-link`: a one-time code linking a messenger chat to the caller's account. Sending
     * `/start <code>` to any worker's bot within 15 minutes fills the account's chat id with that chat; the code
     * is then spent. A new code replaces the caller's previous ones. Only its sha256 is stored.
     * @returns `{code, command, expires_at}`.
     */
    async linkCode(actor: Actor) {
      // 8 characters of an unambiguous alphabet (no 0/O, 1/I/L): about 40 bits.
      const alphabet = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
      const bytes = crypto.randomBytes(8);
      const code = [...bytes].map((b) => alphabet[b % alphabet.length]).join('');
      const expiresAt = new Date(Date.now() + LINK_CODE_TTL_MS);
      await repo.newLinkCode(actor.id, sha256(code), expiresAt);
      return { code, command: `/start ${code}`, expires_at: expiresAt };
    },

    /** Whether some instance polls bot `botId` now. */
    polling: (botId: string) => repo.polling(botId),

    /** The pollers running in this instance (bot ids), for tests and diagnostics. */
    localPollers: () => [...loops.keys()],
  };
}
export type MessengerService = ReturnType<typeof createMessengerService>;
