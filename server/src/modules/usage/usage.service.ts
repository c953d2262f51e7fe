/**
 * The usage area (docs/ARCHITECTURE.md, Usage, budgets and the trial): the
 * one owner of token usage, trial grants, plan lookups and daily caps. Runtime, workers, onboarding,
 * projects, help and billing ask it; nobody else writes or sums `token_usage`.
 *
 * Budgets hold during a run, not after it: before each model call the caller reserves the call's worst
 * case (prompt estimate + max output tokens) against the tightest budget under the owner's lock, and
 * settles the reservation with the real usage afterwards (`record` with `reservationId`). Two runs racing
 * for the last tokens of a budget are serialized by the lock, so they cannot both pass. A budget's use (usage rows
 * plus live reservations) is summed in one statement and a settlement is one statement, so a sum never sees a call
 * as neither reserved nor used and the settlement needs no lock.
 */
import { TooManyRequests } from '../../http/errors.ts';
import type { Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import {
  assertPlanAllows,
  type Budget,
  dailyTokenCap,
  grantableOutput,
  nextUtcDay,
  type Owner,
  TRIAL_TOKENS,
  tightestBudget,
  trialRemaining,
  utcDayStart,
} from './usage.rules.ts';
import type { Executor, KeySource, UsageRepo } from './usage.repo.ts';
import type { Metrics } from '../../lib/metrics.ts';

/** How long a reservation lives when its call never settles (its process died), in ms. */
export const RESERVATION_TTL_MS = 15 * 60_000;

/** One LLM call to meter (docs/ARCHITECTURE.md, Usage, budgets and the trial). */
export interface UsageCall {
  /** The user the call is billed to: the project owner, or the caller for account-level features. */
  userId: number;
  projectId?: number | null;
  projectName?: string | null;
  workerId?: number | null;
  runId?: number | null;
  model: string | null;
  /** What made the call: worker, generate_prompt, help, note_chat, transcript, … */
  source: string;
  keySource: KeySource;
  usage: { input_tokens: number; output_tokens: number; cache_tokens: number };
  /** The reservation this call settles (see `reserve`). */
  reservationId?: number | null;
}

/** The trial of a user (docs/ARCHITECTURE.md, Usage, budgets and the trial). */
export interface TrialInfo {
  granted: boolean;
  total_granted: number;
  used: number;
  remaining: number;
  active: boolean;
}

/** Who the budget belongs to and which budgets a call draws on. */
export interface BudgetScope {
  /** The project owner. */
  userId: number;
  /**
   * The owner's plan and role as `planOf` read them for this run or stream (the gateway's `Billing`), so its calls
   * do not read them again; read here when absent.
   */
  owner?: Owner;
  projectId: number | null;
  workerId: number | null;
  runId?: number | null;
  keySource: KeySource;
}

export interface UsageDeps {
  repo: UsageRepo;
  /** The owner's plan and role (the accounts area). */
  owners: { planOf(userId: number): Promise<Owner> };
  /** This process's instance id: reservations record it, so its crash charges them (docs/ARCHITECTURE.md). */
  instanceId?: string;
  /** Every recorded call is counted in the metrics too (calls and tokens by model and payer). */
  metrics: Pick<Metrics, 'modelCall'>;
}

/** 429 `token_budget_exceeded` (docs/ARCHITECTURE.md, Worker runtime). */
export function budgetExceeded(b: Budget, workerId: number | null): TooManyRequests {
  return new TooManyRequests(
    'token_budget_exceeded',
    b.scope === 'daily'
      ? `Worker ${workerId} used its daily budget of ${b.cap} tokens; it resets at midnight UTC.`
      : `The trial's ${b.cap} free tokens are used up; add your own LLM key to continue.`,
    {
      scope: b.scope,
      used: b.used,
      cap: b.cap,
      plan: b.plan,
      worker_id: workerId,
      resets_at: b.scope === 'daily' ? nextUtcDay().toISOString() : null,
    },
  );
}

export function createUsageService(deps: UsageDeps) {
  const { repo, owners, metrics } = deps;

  async function trialOf(userId: number, ex?: Executor): Promise<TrialInfo> {
    const t = await repo.trial(userId, ex);
    if (!t) return { granted: false, total_granted: 0, used: 0, remaining: 0, active: false };
    const total = Number(t.tokens_granted);
    const used = await repo.trialSince(userId, t.granted_at, ex);
    const remaining = trialRemaining(total, used);
    return { granted: true, total_granted: total, used, remaining, active: remaining > 0 };
  }

  /** The budgets a call of `scope` draws on, counting live reservations too. */
  async function budgetsOf(scope: BudgetScope, owner: Owner, ex?: Executor): Promise<Budget[]> {
    const out: Budget[] = [];
    const cap = dailyTokenCap(owner);
    if (cap !== null && scope.workerId !== null) {
      const used = await repo.workerBudgetUsed(scope.workerId, utcDayStart(), ex);
      out.push({ scope: 'daily', cap, used, plan: owner.plan });
    }
    if (scope.keySource === 'trial') {
      const t = await repo.trial(scope.userId, ex);
      const granted = t ? Number(t.tokens_granted) : 0;
      const used = t ? await repo.trialBudgetUsed(scope.userId, t.granted_at, ex) : 0;
      out.push({ scope: 'trial', cap: granted, used, plan: owner.plan });
    }
    return out;
  }

  return {
    /**
     * Meter one LLM call: one `token_usage` row; with `reservationId` the reservation is settled in the same
     * statement (removed, the real usage counted instead; nothing when it was already charged). Once stored, the
     * call and its tokens are counted in the metrics (docs/operations.md, Metrics).
     */
    async record(call: UsageCall): Promise<void> {
      const row = {
        userId: call.userId,
        projectId: call.projectId ?? null,
        projectName: call.projectName ?? null,
        workerId: call.workerId ?? null,
        runId: call.runId ?? null,
        model: call.model,
        source: call.source,
        keySource: call.keySource,
        input: call.usage.input_tokens,
        output: call.usage.output_tokens,
        cache: call.usage.cache_tokens,
      };
      const rid = call.reservationId;
      if (rid == null) await repo.insert(row);
      // A reservation already charged (its call was taken for crashed, `settleCrashed`) stays the charge: a call is
      // counted once. Budget sums are one statement each, so they see the call reserved or used, never neither.
      else await repo.settleReservation(rid, row);
      metrics.modelCall({ ...row, payer: row.keySource });
    },

    /** Tokens of a worker today (UTC day), from its usage rows. */
    todayFor: (workerId: number): Promise<number> => repo.workerSince(workerId, utcDayStart()),

    /** The trial of a user: granted, used since the grant, remaining (the one trial formula). */
    trial: (userId: number): Promise<TrialInfo> => trialOf(userId),

    /** Tokens a user has left on the trial (0 without one). */
    async trialRemaining(userId: number): Promise<number> {
      return (await trialOf(userId)).remaining;
    },

    /** Grant the trial (TRIAL_TOKENS) inside the caller's transaction (onboarding setup). */
    grantTrial: (tx: Executor, userId: number, projectId: number | null): Promise<void> =>
      repo.insertTrial(tx, { userId, projectId, tokens: TRIAL_TOKENS }),

    /**
     * Take the owner's creation lock inside `tx` (call before counting), so two creations at the limit cannot
     * both pass; then check the counts with `assertPlanAllows`.
     */
    lockForCreation: (tx: Transaction<DB>, ownerId: number): Promise<void> => repo.lockCreation(tx, ownerId),

    /** The plan-limit rule (usage.rules.ts). @throws 402 `plan_limit_reached`. */
    assertPlanAllows,

    /** The owner's plan and role (the one plan lookup of budgets and limits). */
    planOf: (userId: number): Promise<Owner> => owners.planOf(userId),

    /** The daily cap of each of an owner's workers; `null` = unmetered. */
    async capFor(ownerId: number): Promise<number | null> {
      return dailyTokenCap(await owners.planOf(ownerId));
    },

    /**
     * Refuse a new run when a budget it draws on is spent (used ≥ cap). A run accepted with a few tokens
     * left stops at its first reservation when not even MIN_OUTPUT_TOKENS fit.
     * @throws 429 `token_budget_exceeded` `{scope, used, cap, plan, worker_id, resets_at}`.
     */
    async assertNotSpent(scope: BudgetScope): Promise<void> {
      const b = tightestBudget(await budgetsOf(scope, scope.owner ?? (await owners.planOf(scope.userId))));
      if (b && b.used >= b.cap) throw budgetExceeded(b, scope.workerId);
    },

    /**
     * Reserve the worst case of one model call before making it: `promptTokens + maxTokens` against the
     * tightest budget, under the owner's lock. When the full worst case does not fit, the call is granted
     * the output that still fits (at least MIN_OUTPUT_TOKENS).
     * @returns the reservation id (null when unmetered) and the output tokens the call may use.
     * @throws 429 `token_budget_exceeded` when not even MIN_OUTPUT_TOKENS fit.
     */
    async reserve(
      scope: BudgetScope & { projectName?: string | null },
      call: { promptTokens: number; maxTokens: number; model?: string | null; source?: string },
    ): Promise<{ id: number | null; maxTokens: number }> {
      const owner = scope.owner ?? (await owners.planOf(scope.userId));
      /** What the call is: a crash charges the reservation as a usage row of it (`settleCrashed`). */
      const about = {
        userId: scope.userId,
        projectId: scope.projectId,
        workerId: scope.workerId,
        runId: scope.runId ?? null,
        keySource: scope.keySource,
        expiresAt: new Date(Date.now() + RESERVATION_TTL_MS),
        instanceId: deps.instanceId ?? null,
        projectName: scope.projectName ?? null,
        model: call.model ?? null,
        source: call.source ?? null,
        promptTokens: call.promptTokens,
      };
      if (dailyTokenCap(owner) === null && scope.keySource !== 'trial') {
        // Unmetered: no budget to hold, but the call is still recorded as under way, so a crash charges it.
        const id = await repo.insertReservation({ ...about, tokens: call.promptTokens + call.maxTokens });
        return { id, maxTokens: call.maxTokens };
      }
      return repo.transaction(async (tx) => {
        await repo.lockOwner(tx, scope.userId);
        const b = tightestBudget(await budgetsOf(scope, owner, tx));
        const grant = grantableOutput(b, call.promptTokens, call.maxTokens);
        if (grant === null) throw budgetExceeded(b!, scope.workerId);
        const id = await repo.insertReservation({ ...about, tokens: call.promptTokens + grant }, tx);
        return { id, maxTokens: grant };
      });
    },

    /** Drop a reservation whose call made no usage (it failed before the provider answered). */
    release: async (reservationId: number): Promise<void> => void (await repo.deleteReservation(reservationId)),

    /**
     * Charge reservations whose calls were cut (a crash, a stop handing a run back): the provider billed what it
     * generated, which the service cannot know, so each is charged at its worst case as a usage row marked
     * `estimated` (docs/ARCHITECTURE.md, Crash recovery). A reservation is charged once.
     * @param which reservation `ids`, those of runs `runIds`, or of instances `instanceIds`.
     * @returns the usage rows written (run id and tokens of each).
     */
    settleCrashed: (which: { ids: number[] } | { runIds: number[] } | { instanceIds: string[] }) =>
      repo.settleReservations(which),

    /** Charge reservations that expired unsettled (RESERVATION_TTL_MS; `settleCrashed`). @returns how many. */
    purgeExpired: async (): Promise<number> => (await repo.settleReservations({ expired: true })).length,

    /** `GET /account/usage`: the caller's newest 200 rows and totals over all their rows. */
    async forAccount(userId: number) {
      const rows = await repo.listForUser(userId, 200);
      return { rows, totals: await repo.totalsForUser(userId) };
    },

    /** Token sums of a user since a time (billing summaries). */
    totalsSince: (userId: number, since?: Date) => repo.totalsForUser(userId, since),

    /** Token sums per model of a user's calls since a time, optionally of some key sources (billing spend). */
    byModelSince: (userId: number, since: Date, keySources?: KeySource[]) =>
      repo.byModelSince(userId, since, keySources),

    /** Tokens per project of a user's given projects. */
    byProject: (userId: number, projectIds: number[]) => repo.byProject(userId, projectIds),

    /** Tokens per UTC day of a project in `[since, end)`. */
    dailyForProject: (projectId: number, since: Date, end: Date) => repo.dailyForProject(projectId, since, end),

    /** A worker's newest `limit` days with usage, newest first. */
    dailyForWorker: (workerId: number, limit: number) => repo.dailyForWorker(workerId, limit),
  };
}

export type UsageService = ReturnType<typeof createUsageService>;
