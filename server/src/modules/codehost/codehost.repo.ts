/** SQL of the code host area: `codehost_links`, one connection per account with its OAuth token sealed. */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';

export function createCodehostRepo(db: Kysely<DB>) {
  return {
    /** A user's connection (the token still sealed), or undefined. */
    link: (userId: number) =>
      db.selectFrom('codehost_links').selectAll().where('user_id', '=', userId).executeTakeFirst(),

    /** Store (or replace) a user's connection. */
    async save(l: { userId: number; login: string; codehostUserId: string; tokenSealed: string; scopes: string }) {
      const values = {
        login: l.login,
        codehost_user_id: l.codehostUserId,
        token_enc: l.tokenSealed,
        scopes: l.scopes,
        created_at: new Date(),
      };
      await db
        .insertInto('codehost_links')
        .values({ user_id: l.userId, ...values })
        .onConflict((oc) => oc.column('user_id').doUpdateSet(values))
        .execute();
    },

    /** Forget a user's connection. @returns the removed row (its token still sealed), or undefined. */
    remove: (userId: number) =>
      db.deleteFrom('codehost_links').where('user_id', '=', userId).returningAll().executeTakeFirst(),

    /** Erasure: forget the user's connection (inside the erasure transaction). */
    async eraseUser(tx: Transaction<DB>, userId: number): Promise<void> {
      await tx.deleteFrom('codehost_links').where('user_id', '=', userId).execute();
    },

    /** The export's `codehost`: the login and since when (never the token). */
    exportUser: (userId: number) =>
      db
        .selectFrom('codehost_links')
        .select(['login', 'scopes', 'created_at'])
        .where('user_id', '=', userId)
        .executeTakeFirst(),
  };
}

export type CodehostRepo = ReturnType<typeof createCodehostRepo>;
