/**
 * Approvals (docs/ARCHITECTURE.md, Approvals): a run that reaches a tool call its worker's rules (or the project's
 * default) mark stops with status `waiting_approval`; its queue job is completed, so the wait survives restarts. A
 * person (the project's owner or an admin) approves or denies the call; the decision is one conditional UPDATE, so
 * two clicks on two instances record once (the second answers 409 with the first decision). The run is then requeued
 * and resumes from its journal (journal.ts): no model call is repeated, an approved call runs once, a denied one is
 * refused to the model with the reason. An approval still pending after `APPROVAL_TIMEOUT_S` is `expired` by a
 * delayed job (`approvals.expire`, one instance takes it) and refused the same way. Only these paths change an
 * approval: nothing the model writes or a tool answers is read as a decision. Every decision is an activity event.
 *
 * A request is also told to the owner, through durable jobs sent in the transaction that stores it
 * (`approvals.notify`, one per channel): an e-mail with a link to the card in the web UI (never a link that
 * decides: a GET changes nothing), and a message with Approve / Deny buttons to the owner's linked messenger
 * chat (the messenger area, which decides through `decide` with channel `messenger`).
 */
import type { Static } from 'typebox';
import type { Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { Actor } from '../../http/auth.ts';
import type { Access } from '../../access/access.ts';
import type { ActivityLog } from '../../lib/activity.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { Mailer } from '../../providers/mail/mail.ts';
import { Conflict, NotFound } from '../../http/errors.ts';
import type { RunEvents } from './events.ts';
import type { ApprovalGate } from './engine.ts';
import type { JournalToolUse } from './journal.ts';
import { refusalText, ruleFor, type ApprovalRule } from './approvals.rules.ts';
import type { ApprovalRow, ApprovalsRepo, ApprovalStatus } from './approvals.repo.ts';
import type { RuntimeRepo } from './runtime.repo.ts';
import type * as S from './approvals.schemas.ts';

/** An approval as the API shows it (the `Approval` schema). */
export type ApprovalView = Static<typeof S.Approval>;

/** Approvals listed at most per request (newest first). */
export const APPROVALS_LIST_LIMIT = 200;

export interface ApprovalsDeps {
  repo: ApprovalsRepo;
  /** The runs approvals belong to (requeued once decided). */
  runs: Pick<RuntimeRepo, 'transaction' | 'requeueWaiting'>;
  access: Pick<Access, 'project' | 'ownerActor'>;
  activity: Pick<ActivityLog, 'record'>;
  jobs: Pick<JobQueue, 'start' | 'send'>;
  events: Pick<RunEvents, 'publish'>;
  /** Seconds an approval waits before it expires (`APPROVAL_TIMEOUT_S`). */
  timeoutS: number;
  /** The owner's e-mail about a request. */
  mailer: Pick<Mailer, 'send'>;
  /** The web UI's address (`APP_URL`), for the link to the card. */
  appUrl: string;
  log: { info(o: object, m: string): void; warn(o: object, m: string): void };
}

/** The channels a request is told through (`approvals.notify`). */
export type NoticeChannel = 'messenger' | 'email';

/** What a channel needs to tell the owner about a pending approval. */
export interface ApprovalNotice {
  approval: ApprovalView;
  projectId: number;
  projectName: string;
  /** The project's owner (whose chat and mailbox are told). */
  owner: Actor;
  /** The label of the worker that asks. */
  worker: string;
  /** The card of the approval in the web UI: the project's chat with the approval open. */
  url: string;
}

/** Longest excerpt of a call's input shown in a notice (characters). */
export const NOTICE_INPUT_CHARS = 1500;

/** The call of an approval as a notice shows it: the tool and its input as JSON, cut at NOTICE_INPUT_CHARS. */
export function noticeCall(a: Pick<ApprovalView, 'tool' | 'input'>): string {
  const json = JSON.stringify(a.input, null, 1);
  return `${a.tool} ${json.length > NOTICE_INPUT_CHARS ? `${json.slice(0, NOTICE_INPUT_CHARS)}…` : json}`;
}

export const toApprovalView = (r: ApprovalRow): ApprovalView => ({
  id: r.id,
  run_id: r.run_id,
  worker_id: r.worker_id,
  tool: r.tool,
  input: (r.input ?? {}) as Record<string, unknown>,
  status: r.status,
  created_at: r.created_at,
  decided_at: r.decided_at,
  decided_by: r.decided_by,
  channel: r.channel,
  reason: r.reason,
});

/** The approvals service (module header); built once by the composition root. */
export function createApprovalsService(deps: ApprovalsDeps) {
  const { repo } = deps;

  /** Inside `tx`: the run of a decided approval goes back to the queue when it is waiting. */
  async function resume(tx: Transaction<DB>, runId: number): Promise<boolean> {
    if (!(await deps.runs.requeueWaiting(tx, runId))) return false;
    await deps.jobs.send('runtime.run', { run_id: runId }, { tx });
    return true;
  }

  /** Inside `tx`: the job that shows approval `id`'s decision on its request's messenger message, if any. */
  const showDecision = (tx: Transaction<DB>, id: number) =>
    deps.jobs.send('approvals.notify', { approval_id: id, channel: 'messenger_decided', worker: '' }, { tx });

  return {
    /**
     * The execution's approval hook for one tool call of run `run` under `rules` (approvals.rules.ts), the run having
     * spent `spentTokens` so far (for `@tokens` rules): `run` when no rule asks, the call was approved, or
     * (`once_per_run`) the tool was approved earlier in the run;
     * `refuse` with the reason when it was denied or expired; `wait` while it is pending (asked here once per call).
     */
    async gate(
      run: { projectId: number; ownerId: number; runId: number; workerId: number; actor: string },
      rules: ApprovalRule[],
      use: JournalToolUse,
      spentTokens = 0,
    ): Promise<ApprovalGate> {
      const rule = ruleFor(rules, use.name, spentTokens);
      if (!rule) return { action: 'run' };
      const known = await repo.forCall(run.runId, use.id);
      if (known) {
        if (known.status === 'approved') return { action: 'run' };
        if (known.status === 'pending') return { action: 'wait' };
        return {
          action: 'refuse',
          message: refusalText({ status: known.status, reason: known.reason, tool: use.name }),
        };
      }
      if (rule.mode === 'once_per_run' && (await repo.approvedInRun(run.runId, use.name))) return { action: 'run' };
      await this.request({ ...run, tool: use.name, toolUseId: use.id, input: use.input });
      return { action: 'wait' };
    },

    /** Pending approvals of run `runId` (inside the transaction that parks the run). */
    pendingOfRun: (tx: Transaction<DB>, runId: number): Promise<number> => repo.pendingOfRun(tx, runId),

    /**
     * A run asks for an approval of a tool call (the execution's approval hook): stored once per call with its
     * expiry job (sent delayed by the timeout) and an `approval_requested` event, in one transaction.
     * @returns the approval row (a resumed run asking again for the same call gets the same row).
     */
    async request(a: {
      projectId: number;
      ownerId: number;
      runId: number;
      workerId: number;
      actor: string;
      tool: string;
      toolUseId: string;
      input: Record<string, unknown>;
    }): Promise<ApprovalRow> {
      // The row, its expiry job and its event in one transaction: an approval never waits without its expiry.
      const { row, created } = await deps.runs.transaction(async (tx) => {
        const r = await repo.request(tx, a);
        if (!r.created) return r;
        await deps.jobs.send(
          'approvals.expire',
          { approval_id: r.row.id },
          { startAfter: new Date(+r.row.created_at + deps.timeoutS * 1000 + 500), tx },
        );
        for (const channel of ['messenger', 'email'] as const)
          await deps.jobs.send('approvals.notify', { approval_id: r.row.id, channel, worker: a.actor }, { tx });
        await deps.activity.record(
          {
            type: 'approval_requested',
            userId: a.ownerId,
            actor: a.actor,
            projectId: a.projectId,
            workerId: a.workerId,
            title: `Approval needed: ${a.tool}`,
            detail: JSON.stringify(a.input).slice(0, 280),
            payload: { approval_id: r.row.id, run_id: a.runId, tool: a.tool },
          },
          tx,
        );
        return r;
      });
      if (!created) return row;
      deps.events.publish(a.runId, { type: 'approval_requested', approval_id: row.id, tool: a.tool });
      return row;
    },

    /** `GET /projects/:name/approvals?status=`: the project's approvals, newest first. */
    async list(actor: Actor, name: string, status?: ApprovalStatus): Promise<{ approvals: ApprovalView[] }> {
      const p = await deps.access.project(actor, name);
      const rows = await repo.list(p.id, { status, limit: APPROVALS_LIST_LIMIT });
      return { approvals: rows.map(toApprovalView) };
    },

    /**
     * `POST /projects/:name/approvals/:id`: a person's decision (the project's owner or an admin, checked by
     * `access.project`). Channel `api` for an access token, `web` for a session, or `via` (the messenger area
     * deciding for the owner's linked chat). Approve: the run is requeued and the call runs once; deny: the model
     * is told it was refused, with `reason`.
     * @returns the decided approval. @throws 404 `approval_not_found`; 409 `approval_decided` with the first
     *   decision (`approval`).
     */
    async decide(
      actor: Actor,
      name: string,
      id: number,
      body: { decision: 'approve' | 'deny'; reason?: string },
      via?: 'messenger',
    ): Promise<ApprovalView> {
      const p = await deps.access.project(actor, name);
      const found = await repo.get(p.id, id);
      if (!found) throw new NotFound(`Approval ${id} was not found in this project.`, 'approval_not_found');
      const channel = via ?? (actor.grant ? 'api' : 'web');
      const status = body.decision === 'approve' ? 'approved' : 'denied';
      const reason = body.reason?.trim() || null;
      await deps.jobs.start(); // not inside the transaction (starting the queue there would wait for its own lock)
      const decided = await deps.runs.transaction(async (tx) => {
        const row = await repo.decide(tx, id, {
          status,
          reason,
          decidedBy: actor.email,
          decidedByUser: actor.id,
          channel,
        });
        if (!row) return undefined;
        await deps.activity.record(
          {
            type: 'approval_decided',
            userId: p.owner_id,
            actor: actor.email,
            projectId: p.id,
            workerId: row.worker_id,
            // Who decided is the event's actor (and user id): an erasure renames the actor, so neither the title
            // nor the payload repeats the e-mail.
            title: `${row.tool} ${status}`,
            detail: reason,
            payload: {
              approval_id: row.id,
              run_id: row.run_id,
              tool: row.tool,
              decision: status,
              channel,
              decided_by_user: actor.id,
              decided_at: row.decided_at,
            },
          },
          tx,
        );
        await resume(tx, row.run_id);
        // The request's messenger message shows a decision made elsewhere (the messenger edits its own).
        if (channel !== 'messenger') await showDecision(tx, row.id);
        return row;
      });
      if (!decided) {
        const first = (await repo.get(p.id, id))!;
        throw new Conflict('approval_decided', `Approval ${id} was already decided (${first.status}).`, {
          approval: toApprovalView(first),
        });
      }
      deps.log.info({ approval_id: id, run_id: decided.run_id, status, channel }, 'approval decided');
      return toApprovalView(decided);
    },

    /**
     * What a channel tells the owner about approval `id` (the `approvals.notify` job), or undefined when it is no
     * longer pending (decided before the notice went out: nothing to tell).
     */
    async notice(id: number, worker: string): Promise<ApprovalNotice | undefined> {
      const row = await repo.byId(id);
      if (!row || row.status !== 'pending') return undefined;
      const { actor: owner, projectName } = await deps.access.ownerActor(row.project_id);
      return {
        approval: toApprovalView(row),
        projectId: row.project_id,
        projectName,
        owner,
        worker,
        url: `${deps.appUrl}/projects/${encodeURIComponent(projectName)}/approvals?approval=${row.id}`,
      };
    },

    /** Approval `id` as the API shows it, or undefined (the notice jobs). */
    async view(id: number): Promise<ApprovalView | undefined> {
      const row = await repo.byId(id);
      return row ? toApprovalView(row) : undefined;
    },

    /**
     * The e-mail channel of a request: the owner gets the call and a link to its card in the web UI, where they
     * decide (signed in). The mail carries no link that decides. Nothing is sent once the approval is decided.
     */
    async mailOwner(id: number, worker: string): Promise<void> {
      const n = await this.notice(id, worker);
      if (!n) return;
      const mins = Math.round(deps.timeoutS / 60);
      await deps.mailer.send({
        to: n.owner.email,
        subject: `Approval needed: ${n.approval.tool} in ${n.projectName}`,
        text:
          `${n.worker}, a worker of project ${n.projectName}, waits for your approval before this call:\n\n` +
          `${noticeCall(n.approval)}\n\n` +
          `Approve or deny it here (signed in): ${n.url}\n\n` +
          `Without a decision within ${mins >= 120 ? `${Math.round(mins / 60)} hours` : `${mins} minutes`} ` +
          `the call is refused.`,
        kind: 'approval_requested',
      });
    },

    /**
     * The `approvals.expire` job: approval `id` still pending after the timeout becomes `expired` (the run resumes
     * with the call refused). @returns whether it expired (false: decided before, or not yet due).
     */
    async expire(id: number): Promise<boolean> {
      const cutoff = new Date(Date.now() - deps.timeoutS * 1000);
      await deps.jobs.start();
      const row = await deps.runs.transaction(async (tx) => {
        const r = await repo.decide(tx, id, {
          status: 'expired',
          reason: `no decision within ${deps.timeoutS} s`,
          decidedBy: 'system',
          decidedByUser: null,
          channel: 'system',
          createdBefore: cutoff,
        });
        if (!r) return undefined;
        await deps.activity.record(
          {
            type: 'approval_expired',
            userId: null,
            actor: 'system',
            projectId: r.project_id,
            workerId: r.worker_id,
            title: `${r.tool} refused: the approval expired`,
            detail: r.reason,
            payload: { approval_id: r.id, run_id: r.run_id, tool: r.tool, decision: 'expired', channel: 'system' },
          },
          tx,
        );
        await resume(tx, r.run_id);
        await showDecision(tx, r.id);
        return r;
      });
      if (row) deps.log.info({ approval_id: id, run_id: row.run_id }, 'approval expired');
      return !!row;
    },
  };
}

export type ApprovalsService = ReturnType<typeof createApprovalsService>;
