/**
 * SQL of the accounts area over `users` that other areas need (the plan lookup of the usage area).
 * The rest of the accounts SQL moves here with the repositories step.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { Owner } from '../usage/plans.ts';

export function createAccountsRepo(db: Kysely<DB>) {
  return {
    /** A user's plan and role; an unknown user reads as a free user. */
    async planOf(userId: number): Promise<Owner> {
      const u = await db.selectFrom('users').select(['plan', 'role']).where('id', '=', userId).executeTakeFirst();
      return u ?? { plan: 'free', role: 'user' };
    },
  };
}

export type AccountsRepo = ReturnType<typeof createAccountsRepo>;

/** E-mail addresses of the given users by id (the operator's list of every user's workers). */
export async function userEmails(db: Kysely<DB>, ids: number[]): Promise<Map<number, string>> {
  if (!ids.length) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'email']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r.email]));
}
