/**
 * The per-user cloud container (docs/ARCHITECTURE.md, Cloud containers).
 *
 * - Status: (none) → provisioning → ready ⇄ paused → deleted. The row is the truth shared by every instance;
 *   every move is one conditional UPDATE, so concurrent calls on several instances cannot move it twice.
 * - Provision needs a cloud plan (402 `cloud_plan_required`) and a runtime that can run containers
 *   (503 `container_runtime_unavailable`); it is idempotent: an existing container is answered as it is.
 * - Lifecycle: every 5 minutes one instance (a lease in `cloud_leases`) pauses the containers idle for 30
 *   minutes; `resumeUser` (a chat message, a terminal socket, any container command) unfreezes first.
 * - The plan is checked on every use, not only at provision: every resume, terminal, command and log stream
 *   reads the owner's stored plan, and without one that includes cloud the container is paused and the use
 *   refused (402 `cloud_plan_required`); the sweep pauses live containers whose owner lost the plan.
 * - The terminal and every command run inside the container; their output lines are stored in
 *   `cloud_log_lines` and published on the bus (`cloud.log`), so the log stream of any instance follows them.
 * - Container endpoints act on the caller's own container; the socket and the stream also require the path's
 *   user id to equal the token's chat id (403 `container_owner_mismatch`).
 */
import type { Actor } from '../../http/auth.ts';
import { AppError, Forbidden, NotFound, PaymentRequired, Upstream } from '../../http/errors.ts';
import type { Bus } from '../../lib/bus.ts';
import { follow } from '../../lib/follow.ts';
import type { Sealer } from '../../secrets/crypto.ts';
import {
  type ContainerRuntime,
  type ExecResult,
  RuntimeUnavailable,
  type ShellSession,
} from '../../providers/containers/index.ts';
import type { AccountsRepo } from '../accounts/accounts.repo.ts';
import type { CodehostService } from '../codehost/codehost.service.ts';
import type { AccountsService } from '../accounts/accounts.service.ts';
import { includesCloud } from '../usage/usage.rules.ts';
import type { CloudRepo, ContainerRow } from './cloud.repo.ts';
import { lineSplitter, outputRecorder } from './cloud.output.ts';
import { createCloudWaitlist } from './cloud.waitlist.ts';

/** A ready container idle this long is paused (docs/ARCHITECTURE.md, Cloud containers). */
export const IDLE_PAUSE_SECONDS = 30 * 60;
/** The lifecycle sweep's period (5 minutes). */
export const LIFECYCLE_MS = 5 * 60 * 1000;
/** The log stream starts from the last 50 lines of the last hour. */
export const LOG_TAIL_LINES = 50;
export const LOG_WINDOW_SECONDS = 60 * 60;
/** Stored log lines are kept one day. */
const LOG_KEEP_SECONDS = 24 * 60 * 60;
/** Output of a verify command shown in the answer (last characters). */
const MAX_OUTPUT = 4000;
/** Output lines a terminal holds in memory before they are stored; more are dropped (and counted). */
export const MAX_PENDING_LINES = 1000;
/** `last_active` is refreshed at most this often by terminal traffic (ms). */
const TOUCH_EVERY_MS = 30_000;

export interface CloudDeps {
  repo: CloudRepo;
  runtime: ContainerRuntime;
  /** The waitlist invite upgrades the plan (admin only; invalidates the user's cached row). */
  accounts: Pick<AccountsService, 'setPlan'>;
  /** E-mail addresses of waitlist entries (admin list). */
  emails: Pick<AccountsRepo, 'emails'>;
  /** The owner's stored plan and role, read on every use of the container (never a token's or a cache's). */
  plans: Pick<AccountsRepo, 'planOf'>;
  /** The SSH private key is kept sealed. */
  sealer: Pick<Sealer, 'seal'>;
  /** Log lines and closes to the streams of every instance. */
  bus: Pick<Bus, 'publish' | 'subscribe'>;
  /**
   * `logLinesPerSecond`: output lines of a user's container logged (stored and published) a second, in bursts of ten
   * seconds' worth; `logKeepLines`: lines kept per user (docs/configuration.md, Cloud sandbox caps).
   */
  options: { codehostSsh: string; terminalIdleMs: number; logLinesPerSecond?: number; logKeepLines?: number };
  /** The account's code host connection (OAuth) also counts as `codehost_authed`. */
  codehost?: Pick<CodehostService, 'connected'>;
  log: { warn(o: object, m: string): void; error(o: object, m: string): void; info?(o: object, m: string): void };
}

/** The container as POST /cloud/provision answers it. */
export interface ProvisionAnswer {
  container_id: string;
  status: string;
  server_ip: string | null;
  port: number | null;
  agent_authed: boolean;
  codehost_authed: boolean;
}

/** The container as GET /cloud/status answers it. */
export interface StatusAnswer {
  status: string;
  container_id?: string;
  server_ip?: string | null;
  internal_port?: number | null;
  agent_authed?: boolean;
  codehost_authed?: boolean;
  docker_running?: boolean;
  last_active?: Date;
  created_at?: Date;
}

/** One event of the log stream: a line, or the end. */
export type LogEvent = { line: string } | { closed: true };

const provisionView = (r: ContainerRow): ProvisionAnswer => ({
  container_id: r.container_id,
  status: r.status,
  server_ip: r.server_ip,
  port: r.port,
  agent_authed: r.agent_authed,
  codehost_authed: r.codehost_authed,
});

const unavailable = (err: RuntimeUnavailable) => new Upstream(503, err.code, err.message);

export function createCloudService(deps: CloudDeps) {
  const { repo, runtime, bus, log } = deps;

  /** Call the runtime; its unavailability becomes 503 `container_runtime_unavailable`. */
  const rt = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof RuntimeUnavailable) {
        log.warn({ detail: err.detail }, err.message);
        throw unavailable(err);
      }
      if (err instanceof AppError) throw err;
      // Any other failure of the runtime (a sandbox exiting while its tree is removed, an engine error) is the
      // runtime's, answered as such; the cause stays in the log.
      log.error({ err }, 'container runtime operation failed');
      throw new Upstream(502, 'container_runtime_error', 'The container runtime failed; try again.');
    }
  };

  /**
   * The plan rule of every use (module comment): without a plan that includes cloud, pause the container and
   * refuse. @throws PaymentRequired 402 `cloud_plan_required`.
   */
  const requirePlan = async (userId: number): Promise<void> => {
    const owner = await deps.plans.planOf(userId);
    if (includesCloud(owner)) return;
    await service.pauseUser(userId);
    throw new PaymentRequired('cloud_plan_required', 'The cloud container needs the cloud plan; it stays paused.', {
      plan: owner.plan,
    });
  };

  /** The caller's live container (resumed when paused). @throws NotFound `container_not_found`, 402. */
  const readyContainer = async (userId: number): Promise<ContainerRow> => {
    const row = await repo.container(userId);
    if (!row || row.status === 'deleted' || row.status === 'provisioning')
      throw new NotFound('You have no cloud container; provision one first.', 'container_not_found');
    await service.resumeUser(userId);
    return (await repo.container(userId)) ?? row;
  };

  /** Path user id vs the token's chat id (docs/api.md, Roles and access). */
  const assertOwner = (actor: Actor, pathUserId: string) => {
    if (pathUserId !== actor.chat_id)
      throw new Forbidden('This container belongs to another user.', 'container_owner_mismatch');
  };

  const output = outputRecorder({
    repo,
    bus,
    perSecond: deps.options.logLinesPerSecond ?? 50,
    keepLines: deps.options.logKeepLines ?? 2000,
  });

  /** Run a command inside the caller's container; its output also goes to the container log. */
  const execIn = async (
    row: ContainerRow,
    argv: string[],
    opts: { timeoutMs?: number; input?: string } = {},
  ): Promise<ExecResult> => {
    const res = await rt(() => runtime.exec(row.container_id, row.user_id, argv, opts));
    await output
      .record(row.user_id, [`$ ${argv.join(' ')}`, ...res.output.split('\n')])
      .catch((err) => log.warn({ err: (err as Error).message }, 'cloud log lines not stored'));
    return res;
  };

  /** `codehost_authed` is also true while the account is connected to the code host through OAuth. */
  const withCodehost = async (v: ProvisionAnswer, userId: number): Promise<ProvisionAnswer> => ({
    ...v,
    codehost_authed: v.codehost_authed || !!(await deps.codehost?.connected(userId)),
  });

  let timer: NodeJS.Timeout | undefined;
  /** The log streams open on this instance (ended when the service stops). */
  const openStreams = new Set<() => void>();

  const service = {
    /**
     * POST /cloud/provision → `{container_id, status, server_ip, port, agent_authed, codehost_authed}`.
     * Idempotent: an existing container (or an attempt under way) is answered as it is.
     * @throws PaymentRequired 402 `cloud_plan_required` without a cloud plan; Upstream 503
     *   `container_runtime_unavailable` when the runtime cannot run containers (nothing is stored then).
     */
    async provision(actor: Actor): Promise<ProvisionAnswer> {
      if (!includesCloud(actor))
        throw new PaymentRequired('cloud_plan_required', 'A cloud container needs the cloud plan.', {
          plan: actor.plan,
        });
      const existing = await repo.container(actor.id);
      if (existing && existing.status !== 'deleted' && existing.status !== 'provisioning')
        return withCodehost(provisionView(existing), actor.id);
      await rt(() => runtime.check());
      if (!(await repo.beginProvisioning(actor.id, runtime.kind))) {
        const now = await repo.container(actor.id);
        if (now) return withCodehost(provisionView(now), actor.id);
      }
      try {
        const created = await rt(() => runtime.create(actor.id));
        const row = await repo.markReady(actor.id, created);
        await repo.activateWaitlist(actor.id);
        return withCodehost(provisionView(row), actor.id);
      } catch (err) {
        await repo.dropProvisioning(actor.id);
        throw err;
      }
    },

    /**
     * GET /cloud/status → the container with live reconciliation (the runtime's view corrects a stored
     * ready/paused), `docker_running`, and a refreshed `last_active`; `{status:'none'}` without a container.
     */
    async status(actor: Actor): Promise<StatusAnswer> {
      let row = await repo.container(actor.id);
      if (!row) return { status: 'none' };
      let running = false;
      if (row.status !== 'deleted' && row.status !== 'provisioning') {
        let live: Awaited<ReturnType<ContainerRuntime['inspect']>> | undefined;
        try {
          live = await runtime.inspect(row.container_id, row.user_id);
        } catch (err) {
          log.warn({ err: (err as Error).message }, 'container runtime unreachable for status');
        }
        running = live === 'running' || live === 'paused';
        if (live === 'paused' && row.status === 'ready')
          row = (await repo.setStatus(actor.id, ['ready'], 'paused')) ?? row;
        else if (live === 'running' && row.status === 'paused')
          row = (await repo.setStatus(actor.id, ['paused'], 'ready')) ?? row;
        row = (await repo.touch(actor.id)) ?? row;
      }
      return {
        status: row.status,
        container_id: row.container_id,
        server_ip: row.server_ip,
        internal_port: row.internal_port,
        agent_authed: row.agent_authed,
        codehost_authed: row.codehost_authed || !!(await deps.codehost?.connected(actor.id)),
        docker_running: running,
        last_active: row.last_active,
        created_at: row.created_at,
      };
    },

    /**
     * POST /cloud/deprovision → `{ok:true, container_id}`: stops and removes the container and its network,
     * status stored as deleted; the log streams end. @throws NotFound `container_not_found`.
     */
    async deprovision(actor: Actor): Promise<{ ok: true; container_id: string }> {
      const row = await repo.container(actor.id);
      if (!row || row.status === 'deleted') throw new NotFound('You have no cloud container.', 'container_not_found');
      await rt(() => runtime.remove(row.container_id, row.user_id));
      await repo.setStatus(actor.id, ['provisioning', 'ready', 'paused', 'suspended'], 'deleted');
      await bus.publish('cloud.closed', { user: actor.id });
      return { ok: true, container_id: row.container_id };
    },

    /**
     * POST /cloud/ssh-keygen → `{public_key}`: an ed25519 key pair for the code host, kept (private part
     * sealed) and placed in the container's `~/.ssh/`. Idempotent: the stored key is answered again.
     */
    async sshKeygen(actor: Actor): Promise<{ public_key: string }> {
      const row = await readyContainer(actor.id);
      if (row.ssh_public_key) return { public_key: row.ssh_public_key };
      const { default: ssh2 } = await import('ssh2'); // at first use: ~0.1 s and ~18 MiB of every start otherwise
      const pair = ssh2.utils.generateKeyPairSync('ed25519', { comment: `crm-cloud-${actor.id}` });
      const kept = await repo.keepSshKey(actor.id, pair.public, deps.sealer.seal(pair.private));
      if (kept !== pair.public) return { public_key: kept ?? pair.public };
      const res = await rt(() =>
        runtime.exec(
          row.container_id,
          row.user_id,
          ['sh', '-c', 'umask 077 && mkdir -p "$HOME/.ssh" && cat > "$HOME/.ssh/id_ed25519"'],
          { input: pair.private, timeoutMs: 15_000 },
        ),
      );
      if (res.code !== 0) log.warn({ code: res.code }, 'ssh key not placed in the container');
      await rt(() =>
        runtime.exec(row.container_id, row.user_id, ['sh', '-c', 'cat > "$HOME/.ssh/id_ed25519.pub"'], {
          input: `${pair.public}\n`,
          timeoutMs: 15_000,
        }),
      );
      return { public_key: pair.public };
    },

    /**
     * POST /cloud/ssh-verify → `{ok, output}`: tries the code host's SSH login from inside the container;
     * on success `codehost_authed` becomes true.
     */
    async sshVerify(actor: Actor): Promise<{ ok: boolean; output: string }> {
      const row = await readyContainer(actor.id);
      const res = await execIn(
        row,
        [
          'ssh',
          '-T',
          '-o',
          'BatchMode=yes',
          '-o',
          'StrictHostKeyChecking=accept-new',
          '-o',
          'ConnectTimeout=10',
          deps.options.codehostSsh,
        ],
        { timeoutMs: 20_000 },
      );
      const ok = /successfully authenticated|welcome to/i.test(res.output);
      if (ok) await repo.setFlag(actor.id, 'codehost_authed');
      return { ok, output: res.output.trim().slice(-MAX_OUTPUT) };
    },

    /**
     * POST /cloud/claude-verify → `{ok, output}`: the agent CLI's version inside the container
     * (`claude --version`); on success `agent_authed` becomes true.
     */
    async claudeVerify(actor: Actor): Promise<{ ok: boolean; output: string }> {
      const row = await readyContainer(actor.id);
      const res = await execIn(row, ['claude', '--version'], { timeoutMs: 20_000 });
      const ok = res.code === 0 && res.output.trim().length > 0;
      if (ok) await repo.setFlag(actor.id, 'agent_authed');
      return { ok, output: res.output.trim().slice(-MAX_OUTPUT) };
    },

    /**
     * Run a command inside user `userId`'s container when it has one (resumed first), for the agent's tools.
     * @returns the result, or null when the user has no live container (the command is not run anywhere).
     * @throws PaymentRequired 402 `cloud_plan_required` when the owner's plan no longer includes cloud.
     */
    async runCommand(userId: number, argv: string[], opts: { timeoutMs?: number } = {}): Promise<ExecResult | null> {
      const row = await repo.container(userId);
      if (!row || row.status === 'deleted' || row.status === 'provisioning') return null;
      await service.resumeUser(userId);
      return execIn(row, argv, opts);
    },

    /** Pause user `userId`'s container (no-op without a ready one): billing's cancel, the lifecycle. */
    async pauseUser(userId: number): Promise<void> {
      const row = await repo.setStatus(userId, ['ready'], 'paused');
      if (!row) return;
      try {
        await runtime.pause(row.container_id, userId);
      } catch (err) {
        await repo.setStatus(userId, ['paused'], 'ready');
        log.warn({ err: (err as Error).message, user: userId }, 'container pause failed');
      }
    },

    /**
     * Unfreeze user `userId`'s paused container and refresh `last_active` (no-op without one): a chat
     * message from the web or a messenger, a terminal socket, any container command.
     * @throws PaymentRequired 402 `cloud_plan_required` (the container paused) when the plan lacks cloud.
     */
    async resumeUser(userId: number): Promise<void> {
      const current = await repo.container(userId);
      if (!current || current.status === 'deleted' || current.status === 'provisioning') return;
      await requirePlan(userId);
      const row = await repo.setStatus(userId, ['paused', 'suspended'], 'ready');
      if (!row) {
        await repo.touch(userId);
        return;
      }
      try {
        await runtime.resume(row.container_id, userId);
      } catch (err) {
        log.warn({ err: (err as Error).message, user: userId }, 'container resume failed');
      }
    },

    /** The fleet for the admin dashboard: containers per status (deleted ones not counted). */
    async fleetStats(): Promise<{
      total: number;
      running: number;
      paused: number;
      stopped: number;
      provisioning: number;
      runtime: string;
    }> {
      const by = await repo.countByStatus();
      const running = by.ready ?? 0;
      const paused = by.paused ?? 0;
      const stopped = by.suspended ?? 0;
      const provisioning = by.provisioning ?? 0;
      return {
        total: running + paused + stopped + provisioning,
        running,
        paused,
        stopped,
        provisioning,
        runtime: runtime.kind,
      };
    },

    /** Waitlist entries per status, for the admin dashboard. */
    waitlistStats: () => repo.waitlistStats(),

    /**
     * One lifecycle sweep: when this instance takes the lease (once per period across instances), pause every
     * ready container whose owner's plan no longer includes cloud, then every one idle for 30 minutes, and drop
     * log lines older than a day.
     * @returns how many containers were paused, or null when another instance holds the lease.
     */
    async lifecycleSweep(): Promise<{ paused: number } | null> {
      if (!(await repo.takeLease('cloud.lifecycle', LIFECYCLE_MS / 1000 - 10))) return null;
      // Live containers whose owner lost the plan (an admin's change, a downgrade whose pause failed) pause too.
      for (const userId of await repo.readyUsers())
        if (!includesCloud(await deps.plans.planOf(userId))) await service.pauseUser(userId);
      const claimed = await repo.claimIdle(IDLE_PAUSE_SECONDS);
      for (const c of claimed) {
        try {
          await runtime.pause(c.container_id, c.user_id);
        } catch (err) {
          await repo.setStatus(c.user_id, ['paused'], 'ready');
          log.warn({ err: (err as Error).message, user: c.user_id }, 'idle container not paused');
        }
      }
      await repo.purgeLines(LOG_KEEP_SECONDS);
      return { paused: claimed.length };
    },

    // Waitlist.

    ...createCloudWaitlist(deps),

    // Terminal and logs.

    /** The terminal socket's idle timeout (ms): closed after this long without a frame either way. */
    terminalIdleMs: deps.options.terminalIdleMs,

    /**
     * Before the terminal socket is upgraded: the path's user id must be the token's chat id and the caller
     * must have a container and a plan that includes cloud. @throws Forbidden `container_owner_mismatch`,
     *   NotFound `container_not_found`, PaymentRequired 402 `cloud_plan_required`.
     */
    async checkTerminal(actor: Actor, pathUserId: string): Promise<void> {
      assertOwner(actor, pathUserId);
      const row = await repo.container(actor.id);
      if (!row || row.status === 'deleted' || row.status === 'provisioning')
        throw new NotFound('You have no cloud container; provision one first.', 'container_not_found');
      await requirePlan(actor.id);
    },

    /**
     * Open the terminal of the caller's container: checks the path's user id against the token's chat id,
     * resumes a paused container, then starts a pty shell inside it. Output lines go to the container log.
     * @throws Forbidden `container_owner_mismatch`, NotFound `container_not_found`, PaymentRequired 402
     *   `cloud_plan_required`, Upstream 503.
     */
    async openTerminal(actor: Actor, pathUserId: string, size: { cols: number; rows: number }) {
      assertOwner(actor, pathUserId);
      const row = await readyContainer(actor.id);
      const session: ShellSession = await rt(() => runtime.shell(row.container_id, row.user_id, size));
      const split = lineSplitter();
      let pending: string[] = [];
      let flushing: Promise<void> = Promise.resolve();
      // One store at a time: while it runs, lines wait in `pending` (bounded below), never in a queue of batches.
      let busy = false;
      let exited = false;
      const flush = () => {
        if (busy || !pending.length) return;
        const lines = pending;
        pending = [];
        busy = true;
        flushing = output
          .record(actor.id, lines)
          .catch((err) => log.warn({ err: (err as Error).message }, 'cloud log lines not stored'))
          .finally(() => {
            busy = false;
            if (exited || pending.length >= 100) flush();
          });
      };
      const tick = setInterval(flush, 200);
      let lastTouch = Date.now();
      session.onData((chunk) => {
        const lines = split.push(chunk);
        // The buffer is bounded: while the store lags, further lines are dropped (and counted).
        const room = Math.max(0, MAX_PENDING_LINES - pending.length);
        if (lines.length > room) output.drop(actor.id, lines.length - room);
        pending.push(...lines.slice(0, room));
        if (pending.length >= 100) flush();
      });
      session.onExit(() => {
        pending.push(...split.flush().slice(0, Math.max(0, MAX_PENDING_LINES - pending.length)));
        exited = true;
        clearInterval(tick);
        flush();
      });
      return {
        session,
        idleMs: deps.options.terminalIdleMs,
        /** Terminal traffic: refresh `last_active` now and then. */
        activity() {
          if (Date.now() - lastTouch < TOUCH_EVERY_MS) return;
          lastTouch = Date.now();
          void repo.touch(actor.id).catch(() => {});
        },
        /** Wait until the output so far is stored. */
        async settled() {
          do {
            flush();
            await flushing;
          } while (pending.length);
        },
      };
    },

    /**
     * The log stream of the caller's container: the last 50 lines of the last hour, then every new line from
     * any instance, then `{closed:true}` when the container is removed.
     * @throws Forbidden `container_owner_mismatch`, NotFound `container_not_found`, PaymentRequired 402
     *   `cloud_plan_required` (checked before streaming).
     */
    async logs(actor: Actor, pathUserId: string): Promise<{ events: AsyncGenerator<{ data: LogEvent }> }> {
      assertOwner(actor, pathUserId);
      const row = await repo.container(actor.id);
      if (!row) throw new NotFound('You have no cloud container.', 'container_not_found');
      if (row.status !== 'deleted') await requirePlan(actor.id);
      const userId = actor.id;
      type Item = { id: number; line: string } | 'closed';
      // Subscribed before the tail is read (follow subscribes at once), so no line falls between them.
      const events = follow<Item, { data: LogEvent }>({
        listen: (notify) => {
          const offLine = bus.subscribe('cloud.log', (p) => p.user === userId && notify({ id: p.id, line: p.line }));
          const offClosed = bus.subscribe('cloud.closed', (p) => p.user === userId && notify('closed'));
          return () => {
            offLine();
            offClosed();
          };
        },
        read: async () => {
          const tail: Item[] = (await repo.tail(userId, LOG_TAIL_LINES, LOG_WINDOW_SECONDS)).map((l) => ({
            id: l.id,
            line: l.line,
          }));
          return row.status === 'deleted' ? [...tail, 'closed'] : tail;
        },
        pollMs: null,
        // Lines published while the tail is read come after it (else the tail's older lines would be dropped).
        ordered: true,
        // A line is news when it is newer than the last one sent (it may come both in the tail and on the bus).
        isNew: (e, last) => e === 'closed' || last === undefined || last === 'closed' || e.id > last.id,
        isDone: (e) => e === 'closed',
        emit: (e) => [{ data: e === 'closed' ? { closed: true as const } : { line: e.line } }],
      });
      // The service stops: end the stream even while it waits for a line.
      const close = () => {
        openStreams.delete(close);
        void events.return(undefined);
      };
      openStreams.add(close);
      return { events };
    },

    /** Start the lifecycle sweep (every 5 minutes; the lease makes one instance do the work). */
    start(): void {
      timer ??= setInterval(() => {
        service.lifecycleSweep().catch((err) => log.error({ err: (err as Error).message }, 'cloud lifecycle failed'));
      }, LIFECYCLE_MS);
      timer.unref();
    },
    stop(): void {
      if (timer) clearInterval(timer);
      timer = undefined;
      for (const close of [...openStreams]) close();
    },
  };
  return service;
}

export type CloudService = ReturnType<typeof createCloudService>;
