/**
 * Plan limits (specification, Limits → Plans; Authentication rule 10) and daily token caps
 * (Workers → runtime). Checked inside the creating transaction under a per-owner advisory lock,
 * so two concurrent creations at the limit cannot both pass.
 *
 * Choices for plans the specification does not size: `starter` 3 projects / 15 workers,
 * `cloud` and `starter_cloud` 5 / 25 (like `min`). Daily token caps: free 100K, starter 400K,
 * starter_cloud 2M (specified); min 1M, cloud 2M, max 5M (ours); beta unmetered (null).
 */
import { sql, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { PaymentRequired } from '../../http/errors.ts';

export const PLAN_LIMITS: Record<string, { projects: number; workers: number }> = {
  free: { projects: 1, workers: 5 },
  starter: { projects: 3, workers: 15 },
  min: { projects: 5, workers: 25 },
  cloud: { projects: 5, workers: 25 },
  starter_cloud: { projects: 5, workers: 25 },
  max: { projects: 20, workers: 150 },
};

export const DAILY_TOKEN_CAPS: Record<string, number | null> = {
  free: 100_000,
  starter: 400_000,
  starter_cloud: 2_000_000,
  min: 1_000_000,
  cloud: 2_000_000,
  max: 5_000_000,
  beta: null,
};

/** Total tokens a trial grants (specification, Limits: Trial 100K), drawn through the platform key. */
export const TRIAL_TOKENS = 100_000;

/**
 * The daily token cap of one worker (UTC day) for its owner's plan; `null` = unmetered (beta, and admin
 * owners: the plan-limit bypass of Authentication rule 10). Unknown plans get the free cap.
 */
export function dailyTokenCap(plan: string, opts: { isAdmin?: boolean } = {}): number | null {
  if (opts.isAdmin) return null;
  return plan in DAILY_TOKEN_CAPS ? DAILY_TOKEN_CAPS[plan] : DAILY_TOKEN_CAPS.free;
}

/** Namespace of the per-owner advisory lock (first key of `pg_advisory_xact_lock(int, int)`). */
const LOCK_NAMESPACE = 30_001;

/** Take the owner's creation lock for the rest of the transaction (PostgreSQL and PGlite). */
export async function lockOwner(tx: Transaction<DB>, ownerId: number): Promise<void> {
  await sql`select pg_advisory_xact_lock(${LOCK_NAMESPACE}::int, ${ownerId}::int)`.execute(tx);
}

/**
 * Check that the owner may add `addProjects` projects and `addWorkers` workers. Call after `lockOwner`.
 * Admins (the acting user) and `beta` owners bypass.
 * @throws PaymentRequired 402 `plan_limit_reached` with `reason`, `current`, `limit`, `plan`.
 */
export async function assertWithinPlan(
  tx: Transaction<DB>,
  owner: { id: number; plan: string },
  actorIsAdmin: boolean,
  add: { projects?: number; workers?: number },
): Promise<void> {
  if (actorIsAdmin || owner.plan === 'beta') return;
  const limits = PLAN_LIMITS[owner.plan] ?? PLAN_LIMITS.free;
  if (add.projects) {
    const { n } = await tx
      .selectFrom('projects')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('owner_id', '=', owner.id)
      .executeTakeFirstOrThrow();
    const current = Number(n);
    if (current + add.projects > limits.projects) {
      throw new PaymentRequired(
        'plan_limit_reached',
        `Your ${owner.plan} plan allows ${limits.projects} project(s); upgrade to create more.`,
        {
          reason: 'projects_limit',
          current,
          limit: limits.projects,
          plan: owner.plan,
        },
      );
    }
  }
  if (add.workers) {
    const { n } = await tx
      .selectFrom('workers')
      .innerJoin('projects', 'projects.id', 'workers.project_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('projects.owner_id', '=', owner.id)
      .executeTakeFirstOrThrow();
    const current = Number(n);
    if (current + add.workers > limits.workers) {
      throw new PaymentRequired(
        'plan_limit_reached',
        `Your ${owner.plan} plan allows ${limits.workers} worker(s); upgrade to add more.`,
        {
          reason: 'workers_limit',
          current,
          limit: limits.workers,
          plan: owner.plan,
        },
      );
    }
  }
}
