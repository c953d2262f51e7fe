/**
 * Token budgets (specification: Workers, runtime object; Limits, Trial).
 *
 * Daily cap per worker by the project owner's plan, counted over the UTC calendar day from the
 * `token_usage` rows of that worker. The caps are defined once, in projects/plan-limits.ts: free 100K,
 * starter 400K, starter_cloud 2M (specified); min 1M, cloud 2M, max 5M (ours); beta and admin owners unmetered.
 * Trial: a trial-mode project calling through the platform key draws on the owner's 100K trial tokens,
 * counted over all of the owner's trial-mode projects.
 */

export const DAILY_TOKEN_CAPS: Record<string, number | null> = {
  free: 100_000,
  starter: 400_000,
  min: 400_000,
  starter_cloud: 2_000_000,
  cloud: 2_000_000,
  max: 5_000_000,
  beta: null,
};

/** Total tokens a trial grants (specification, Limits: Trial 100K). */
export const TRIAL_TOKENS = 100_000;

/** The daily cap of a plan in tokens; `null` = unmetered. Unknown plans get the free cap. */
export function dailyTokenCap(plan: string, opts: { isAdmin?: boolean } = {}): number | null {
  if (opts.isAdmin) return null;
  return plan in DAILY_TOKEN_CAPS ? DAILY_TOKEN_CAPS[plan] : DAILY_TOKEN_CAPS.free;
}

/** Start of the current UTC day. */
export function utcDayStart(now = new Date()): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
}
