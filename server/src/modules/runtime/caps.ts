/**
 * Token budgets (specification: Workers, runtime object; Limits, Trial).
 *
 * Daily cap per worker by the project owner's plan, counted over the UTC calendar day from the
 * `token_usage` rows of that worker. The caps are defined once, in projects/plan-limits.ts: free 100K,
 * starter 400K, starter_cloud 2M (specified); min 1M, cloud 2M, max 5M (ours); beta and admin owners unmetered.
 * Trial: a trial-mode project calling through the platform key draws on the owner's 100K trial tokens,
 * counted over all of the owner's trial-mode projects.
 */

export { DAILY_TOKEN_CAPS, TRIAL_TOKENS, dailyTokenCap } from '../projects/plan-limits.ts';

/** Start of the current UTC day. */
export function utcDayStart(now = new Date()): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
}
