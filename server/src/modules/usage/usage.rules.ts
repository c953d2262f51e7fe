/**
 * The one definition of plans, limits, daily token caps and the trial (docs/ARCHITECTURE.md, Usage, budgets and the
 * trial). Pure rules, no I/O: the usage service applies them.
 *
 * Choices of this service: `starter` 3 projects / 15 workers, `cloud` and
 * `starter_cloud` 5 / 25 (like `min`). Daily token caps: free 100K, starter 400K, starter_cloud 2M,
 * min 1M, cloud 2M, max 5M; beta unmetered.
 */
import { PaymentRequired } from '../../http/errors.ts';

/** The plan names (docs/ARCHITECTURE.md, Plans and payments). */
export const PLAN_NAMES = ['free', 'min', 'cloud', 'max', 'starter', 'starter_cloud', 'beta'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

export const PLAN_LIMITS: Record<string, { projects: number; workers: number }> = {
  free: { projects: 1, workers: 5 },
  starter: { projects: 3, workers: 15 },
  min: { projects: 5, workers: 25 },
  cloud: { projects: 5, workers: 25 },
  starter_cloud: { projects: 5, workers: 25 },
  max: { projects: 20, workers: 150 },
};

/** Daily token cap of one worker (UTC day) by its owner's plan; `null` = unmetered. */
export const DAILY_TOKEN_CAPS: Record<string, number | null> = {
  free: 100_000,
  starter: 400_000,
  starter_cloud: 2_000_000,
  min: 1_000_000,
  cloud: 2_000_000,
  max: 5_000_000,
  beta: null,
};

/** Tokens a trial grants (docs/ARCHITECTURE.md, Usage, budgets and the trial), drawn through the platform key. */
export const TRIAL_TOKENS = 100_000;

/** Who owns the budget: the owner's plan and role. */
export interface Owner {
  plan: string;
  role: string;
}

/**
 * The daily token cap of one worker for its owner. `null` = unmetered: plan `beta`, and admin owners
 * (the plan-limit bypass; docs/ARCHITECTURE.md, Usage, budgets and the trial). Unknown plans get the free cap.
 */
export function dailyTokenCap(owner: Owner): number | null {
  if (owner.role === 'admin') return null;
  return owner.plan in DAILY_TOKEN_CAPS ? DAILY_TOKEN_CAPS[owner.plan] : DAILY_TOKEN_CAPS.free;
}

/** Plans that include a cloud container (docs/ARCHITECTURE.md, Cloud containers). */
export const CLOUD_PLANS: readonly string[] = ['cloud', 'starter_cloud'];

/**
 * Whether an owner may have a cloud container: a cloud plan, or the plan-limit bypass
 * (admins and `beta` owners).
 */
export function includesCloud(owner: Owner): boolean {
  return owner.role === 'admin' || owner.plan === 'beta' || CLOUD_PLANS.includes(owner.plan);
}

/** The project and worker limits of a plan; `null` when the plan bypasses them (beta). Unknown plans: free. */
export function planLimits(plan: string): { projects: number; workers: number } | null {
  if (plan === 'beta') return null;
  return PLAN_LIMITS[plan] ?? PLAN_LIMITS.free;
}

/**
 * Check that an owner may add `add` projects / workers to `current` ones (docs/ARCHITECTURE.md, Usage, budgets and the
 * trial). Admins acting and `beta` owners bypass it.
 * @throws PaymentRequired 402 `plan_limit_reached` `{reason: 'projects_limit'|'workers_limit', current, limit, plan}`.
 */
export function assertPlanAllows(
  plan: string,
  actorIsAdmin: boolean,
  counts: { projects?: { current: number; add: number }; workers?: { current: number; add: number } },
): void {
  const limits = planLimits(plan);
  if (actorIsAdmin || !limits) return;
  const p = counts.projects;
  if (p && p.add > 0 && p.current + p.add > limits.projects) {
    throw new PaymentRequired(
      'plan_limit_reached',
      `Your ${plan} plan allows ${limits.projects} project(s); upgrade to create more.`,
      { reason: 'projects_limit', current: p.current, limit: limits.projects, plan },
    );
  }
  const w = counts.workers;
  if (w && w.add > 0 && w.current + w.add > limits.workers) {
    throw new PaymentRequired(
      'plan_limit_reached',
      `Your ${plan} plan allows ${limits.workers} worker(s); upgrade to add more.`,
      { reason: 'workers_limit', current: w.current, limit: limits.workers, plan },
    );
  }
}

/** Start of the UTC day of `now`. */
export function utcDayStart(now = new Date()): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
}

/** Start of the next UTC day (when a daily cap resets). */
export function nextUtcDay(now = new Date()): Date {
  return new Date(+utcDayStart(now) + 86_400_000);
}

/**
 * The one trial formula: remaining = granted − tokens drawn from the trial since the grant (never below 0).
 * Tokens drawn from the trial are the calls of the owner's trial-mode projects made with the platform key
 * (`token_usage.key_source = 'trial'`).
 */
export function trialRemaining(granted: number, used: number): number {
  return Math.max(0, granted - Math.max(0, used));
}

/** A budget that applies to a call: `daily` (the worker's cap) or `trial` (the owner's trial tokens). */
export interface Budget {
  scope: 'daily' | 'trial';
  cap: number;
  /** Tokens already counted: usage rows plus live reservations. */
  used: number;
  plan: string;
}

/** The tightest of the budgets (least remaining), or null when none applies (unmetered). */
export function tightestBudget(budgets: Budget[]): Budget | null {
  return [...budgets].sort((a, b) => a.cap - a.used - (b.cap - b.used))[0] ?? null;
}

/** Output tokens a call needs at least; a call that cannot be granted this many is refused. */
export const MIN_OUTPUT_TOKENS = 256;

/**
 * How many output tokens a call may be granted under `budget`: `maxTokens` when the worst case
 * (prompt estimate + maxTokens) fits the remaining budget, else what remains after the prompt, and
 * null when that is under `MIN_OUTPUT_TOKENS` (the call must not be made).
 * @param promptTokens estimated input tokens of the call.
 */
export function grantableOutput(budget: Budget | null, promptTokens: number, maxTokens: number): number | null {
  if (!budget) return maxTokens;
  const room = budget.cap - budget.used - promptTokens;
  if (room >= maxTokens) return maxTokens;
  return room >= MIN_OUTPUT_TOKENS ? room : null;
}

/**
 * A conservative estimate of the input tokens of a call from its text: UTF-8 bytes / 3 (English runs at
 * about 4 characters a token, Cyrillic at 2–3 bytes a character), plus 16 per message for framing.
 */
export function estimatePromptTokens(parts: { text: string; messages: number }): number {
  return Math.ceil(Buffer.byteLength(parts.text, 'utf8') / 3) + 16 * Math.max(1, parts.messages);
}

/** Input tokens counted for one image of a vision call (the vendors bill about 1,600 for a 1-megapixel image). */
export const IMAGE_TOKENS = 1600;

/**
 * The estimate of a whole model request: `estimatePromptTokens` over the system prompt, the messages' text (a
 * content block as its JSON, so tool calls and results count with their structure) and the tools' schemas,
 * plus `IMAGE_TOKENS` per image (its base64 bytes are not text the model reads).
 */
export function estimateRequestTokens(req: {
  system?: string;
  messages: Array<{ content: string | Array<{ type: string; [field: string]: unknown }> }>;
  tools?: unknown[];
}): number {
  let text = req.system ?? '';
  let images = 0;
  for (const m of req.messages) {
    if (typeof m.content === 'string') text += m.content;
    else
      for (const block of m.content) {
        if (block.type === 'image') images++;
        else text += JSON.stringify(block);
      }
  }
  if (req.tools?.length) text += JSON.stringify(req.tools);
  return estimatePromptTokens({ text, messages: req.messages.length }) + images * IMAGE_TOKENS;
}

/** Plans sold through the hosted checkout (docs/ARCHITECTURE.md, Plans and payments). */
export const CHECKOUT_PLANS = ['min', 'cloud'] as const;
export type CheckoutPlan = (typeof CHECKOUT_PLANS)[number];

/** Paid plans: cancelling or three failed payments drop them to free (docs/ARCHITECTURE.md, Plans and payments). */
export const PAID_PLANS: readonly string[] = ['min', 'cloud', 'max', 'starter', 'starter_cloud'];

/** Order of plans for upgrades: a checkout plan ranked above the current one is an upgrade. */
const PLAN_RANK: Record<string, number> = { free: 0, starter: 1, min: 2, starter_cloud: 3, cloud: 3, max: 4, beta: 5 };

/** What a plan includes, as `GET /billing/status` shows it (`features`). Unknown plans: free. */
export function planFeatures(plan: string): {
  cloud_container: boolean;
  own_llm_key: boolean;
  unmetered: boolean;
  plan_limit_bypass: boolean;
} {
  return {
    cloud_container: includesCloud({ plan, role: 'user' } as Owner),
    own_llm_key: true,
    unmetered: plan === 'beta',
    plan_limit_bypass: plan === 'beta',
  };
}

/** The checkout plans that are an upgrade from `plan` (none from cloud, max or beta). */
export function upgradesFrom(plan: string): CheckoutPlan[] {
  const rank = PLAN_RANK[plan] ?? 0;
  return CHECKOUT_PLANS.filter((p) => PLAN_RANK[p] > rank);
}

/** Bytes in a mebibyte / gibibyte (storage quotas are given in these units). */
const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/**
 * Storage quota of each plan in bytes (docs/configuration.md, Storage quotas): every file a user's projects hold
 * (uploads, clones, writes through the API and agent tools), note sources, transcripts, wiki pages and the cloud
 * home count. `null` = no quota (beta). Admins have none. `STORAGE_QUOTAS_MB` overrides them.
 */
export const STORAGE_QUOTAS: Record<string, number | null> = {
  free: 1 * GiB,
  starter: 2 * GiB,
  min: 5 * GiB,
  cloud: 20 * GiB,
  starter_cloud: 10 * GiB,
  max: 50 * GiB,
  beta: null,
};

/**
 * The storage quota of an owner in bytes; `null` = none (admins, the plan-limit bypass of Authentication rule 10,
 * and plans whose quota is null). `overrides` (bytes per plan) win over `STORAGE_QUOTAS`; unknown plans get free's.
 */
export function storageQuota(owner: Owner, overrides: Record<string, number | null> = {}): number | null {
  if (owner.role === 'admin') return null;
  const table = { ...STORAGE_QUOTAS, ...overrides };
  return owner.plan in table ? table[owner.plan] : table.free;
}

/** Every plan's storage quota in bytes (null = none), as the account's usage answer lists them. */
export function storageQuotas(overrides: Record<string, number | null> = {}): Record<string, number | null> {
  return Object.fromEntries(PLAN_NAMES.map((p) => [p, storageQuota({ plan: p, role: 'user' }, overrides)]));
}

/**
 * The storage decision of one write (pure): refused when it would take the free disk under DATA_DIR below the
 * floor (`disk`), else when the owner's stored bytes plus the write exceed the quota (`quota`), else allowed.
 * @param bytes the size of the write in bytes (0 for a write of unknown size: it needs the room to be not already
 *   spent).
 */
export function storageDecision(s: {
  bytes: number;
  used: number;
  quota: number | null;
  freeDisk: number;
  floor: number;
}): 'ok' | 'disk' | 'quota' {
  if (s.freeDisk - s.bytes < s.floor) return 'disk';
  if (s.quota !== null && (s.bytes > 0 ? s.used + s.bytes > s.quota : s.used >= s.quota)) return 'quota';
  return 'ok';
}
