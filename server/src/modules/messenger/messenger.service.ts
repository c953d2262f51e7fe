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
 * - Approvals (docs/ARCHITECTURE.md, Approvals): a run waiting for a person is told to the owner's linked chat,
 *   through the worker's bot (else another bot of the project), with buttons `approve:<id>` / `deny:<id>`; a press
 *   from that chat by its own user (a private chat), or a reply "deny: reason" to that message, decides it
 *   (channel `messenger`); the press is answered and the message edited to show the decision. A press from
 *   anyone else, on an id not sent to that chat, or on a decided approval changes nothing.
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
import type { ApprovalNotice, ApprovalsService, ApprovalView } from '../runtime/approvals.service.ts';
import { noticeCall } from '../runtime/approvals.service.ts';
import type { WorkersRepo } from '../workers/workers.repo.ts';
import type { WorkersService } from '../workers/workers.service.ts';
import {
  approvalCallback,
  approvalOutcome,
  choiceButtons,
  denyReply,
  MESSAGE_LIMIT,
  parseCommand,
  splitMessage,
} from './messenger.rules.ts';
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
  /** Decisions on approvals from the owner's chat (channel `messenger`). */
  approvals: Pick<ApprovalsService, 'decide'>;
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
    const press = u.callback ? approvalCallback(u.callback.data) : undefined;
    if (u.callback && press) return decideFromChat(bot, token, u, { ...press, callback: u.callback });
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
    const denial = u.message?.replyTo !== undefined ? denyReply(text) : undefined;
    if (u.message?.replyTo !== undefined && denial !== undefined) {
      const n = await repo.noticeByMessage(bot.bot_id, chatId, u.message.replyTo);
      if (n && n.project_id === bot.project_id)
        return decideFromChat(bot, token, u, {
          decision: 'deny',
          id: n.approval_id,
          reason: denial,
          fromId: u.message.fromId,
        });
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
              // A run waiting for approval ends later (resumed); its reply is sent then.
              if (e.type !== 'end' || e.status === 'waiting_approval') return;
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
   * A decision on an approval from a chat: a press on `approve:<id>` / `deny:<id>` (`callback`), or a reply
   * "deny: reason" to the request's message. It counts only when the chat is the owner's linked chat, the person
   * is the chat's own user (a private chat), and the approval's request was sent to this chat by this bot;
   * otherwise, or when it was decided before, nothing changes and the person is told why. The update is recorded
   * as handled after the decision (a redelivered one then finds it decided and is skipped).
   */
  async function decideFromChat(
    bot: BoundBot,
    token: string,
    u: BotUpdate,
    d: {
      decision: 'approve' | 'deny';
      id: number;
      reason?: string;
      fromId?: string;
      callback?: NonNullable<BotUpdate['callback']>;
    },
  ): Promise<void> {
    const chatId = d.callback?.chatId ?? u.message!.chatId;
    const fromId = d.callback?.fromId ?? d.fromId;
    const { actor: owner, projectName } = await deps.access.ownerActor(bot.project_id);
    const notice = await repo.notice(d.id);
    let answer: string;
    let decided: ApprovalView | undefined;
    if (linkedChat(owner) !== chatId || (fromId !== undefined && fromId !== chatId)) answer = REFUSAL;
    else if (!notice || notice.bot_id !== bot.bot_id || notice.chat_id !== chatId)
      answer = 'This approval is unknown here.';
    else {
      try {
        decided = await deps.approvals.decide(
          owner,
          projectName,
          d.id,
          { decision: d.decision, ...(d.reason ? { reason: d.reason } : {}) },
          'messenger',
        );
        answer = approvalOutcome(decided);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        const first = err.fields.approval as ApprovalView | undefined;
        answer = first ? `Already decided: ${approvalOutcome(first)}` : 'This approval is unknown here.';
      }
    }
    try {
      await repo.transaction((tx) =>
        repo.claimUpdate(tx, {
          botId: bot.bot_id,
          updateId: u.update_id,
          workerId: bot.worker_id,
          chatId,
          kind: decided ? 'approval' : 'approval_refused',
        }),
      );
    } catch (err) {
      if (err instanceof UpdateAlreadyHandled) return;
      throw err;
    }
    if (d.callback)
      await deps.messenger.answerCallbackQuery(token, d.callback.id, answer).catch((err: Error) => {
        log.warn({ bot_id: bot.bot_id, err: err.message }, 'answerCallbackQuery failed');
      });
    else await send(token, chatId, answer);
    if (decided && notice) await showDecision(token, notice, decided);
  }

  /**
   * Edit the request's message to show the decision (once; a failure is logged: the buttons left behind answer
   * "Already decided").
   */
  async function showDecision(
    token: string,
    notice: NonNullable<Awaited<ReturnType<MessengerRepo['notice']>>>,
    decided: ApprovalView,
  ): Promise<void> {
    if (!(await repo.claimNoticeEdit(notice.approval_id))) return;
    const text = `${notice.text}\n\n${approvalOutcome(decided)}`.slice(0, MESSAGE_LIMIT);
    await deps.messenger
      .editMessageText(token, { chatId: notice.chat_id, messageId: notice.message_id, text })
      .catch((err: Error) => log.warn({ approval_id: notice.approval_id, err: err.message }, 'editMessageText failed'));
  }

  /**
   * Send the reply of run `runId` to the chat that asked, once, when the run has ended.
   * @returns whether it was sent by this call.
   */
  async function deliver(runId: number): Promise<boolean> {
    const pending = await repo.pendingReply(runId);
    if (!pending) return false;
    const run = await deps.runs.run(pending.project_id, runId);
    if (run && (run.status === 'queued' || run.status === 'running' || run.status === 'waiting_approval')) return false;
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

    /**
     * The messenger channel of an approval request (the `approvals.notify` job): the owner's linked chat gets the
     * call with Approve / Deny buttons (`callback_data` `approve:<id>` / `deny:<id>`) through the worker's bot,
     * else another bot of the project; nothing when the owner has no linked chat or the project no bot, or when
     * it was sent before. @throws MessengerUnavailable (the job retries) when the messenger fails.
     */
    async approvalRequested(n: ApprovalNotice): Promise<void> {
      const chatId = linkedChat(n.owner);
      if (!chatId) return;
      if (await repo.notice(n.approval.id)) return;
      const bots = (await deps.bots.boundBots()).filter((b) => b.project_id === n.projectId);
      const bot = bots.find((b) => b.worker_id === n.approval.worker_id) ?? bots[0];
      if (!bot) return;
      let token: string;
      try {
        token = deps.sealer.open(bot.token_enc);
      } catch {
        return;
      }
      const text = (
        `${n.worker} (project ${n.projectName}) waits for your approval before this call:\n\n` +
        `${noticeCall(n.approval)}\n\nApprove or deny with the buttons, or reply "deny: <reason>" to this message.`
      ).slice(0, MESSAGE_LIMIT);
      let sent: { messageId: number };
      try {
        sent = await deps.messenger.sendMessage(token, {
          chatId,
          text,
          buttons: [
            [
              { text: 'Approve', callback_data: `approve:${n.approval.id}` },
              { text: 'Deny', callback_data: `deny:${n.approval.id}` },
            ],
          ],
        });
      } catch (err) {
        if (err instanceof MessengerRevoked) return revoked(bot);
        throw err;
      }
      await repo.addNotice({
        approvalId: n.approval.id,
        projectId: n.projectId,
        botId: bot.bot_id,
        chatId,
        messageId: sent.messageId,
        text,
      });
    },

    /**
     * An approval decided elsewhere (the web UI, the API, the expiry; the `approvals.notify` job): its request's
     * message, if one was sent, is edited to show the decision, once.
     */
    async approvalDecided(a: ApprovalView): Promise<void> {
      const notice = await repo.notice(a.id);
      if (!notice || notice.edited_at) return;
      const bot = (await deps.bots.boundBots()).find((b) => b.bot_id === notice.bot_id);
      if (!bot) return;
      let token: string;
      try {
        token = deps.sealer.open(bot.token_enc);
      } catch {
        return;
      }
      await showDecision(token, notice, a);
    },

    /** Whether some instance polls bot `botId` now. */
    polling: (botId: string) => repo.polling(botId),

    /** The pollers running in this instance (bot ids), for tests and diagnostics. */
    localPollers: () => [...loops.keys()],
  };
}
export type MessengerService = ReturnType<typeof createMessengerService>;
