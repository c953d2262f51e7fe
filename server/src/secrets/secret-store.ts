/**
 * The secret store: named platform secrets sealed with AES-256-GCM in the `secrets` table
 * (docs/configuration.md, Managed secrets; docs/ARCHITECTURE.md, Platform settings and their audit).
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/types.ts';
import type { Sealer } from './crypto.ts';

export interface SecretStore {
  /** The plain value, or undefined when not set. */
  get(name: string): Promise<string | undefined>;
  /**
   * Write atomically (insert or replace). `by` is the acting user's e-mail for the record; pass `ex` (a
   * transaction) to write together with other rows.
   */
  set(name: string, value: string, by?: string, ex?: Kysely<DB> | Transaction<DB>): Promise<void>;
  /** Remove a secret (no error when absent); pass `ex` (a transaction) to write together with other rows. */
  delete(name: string, ex?: Kysely<DB> | Transaction<DB>): Promise<void>;
  /** Metadata without values. */
  list(): Promise<Array<{ name: string; updated_at: Date; updated_by: string | null }>>;
  /** Import values that the store does not have yet; returns the names imported. */
  importMissing(values: Record<string, string | undefined>): Promise<string[]>;
}

export function createSecretStore(db: Kysely<DB>, sealer: Sealer): SecretStore {
  return {
    async get(name) {
      const row = await db.selectFrom('secrets').select('value_enc').where('name', '=', name).executeTakeFirst();
      return row ? sealer.open(row.value_enc) : undefined;
    },
    async set(name, value, by, ex = db) {
      const value_enc = sealer.seal(value);
      await ex
        .insertInto('secrets')
        .values({ name, value_enc, updated_by: by ?? null })
        .onConflict((oc) =>
          oc.column('name').doUpdateSet({ value_enc, updated_by: by ?? null, updated_at: new Date() }),
        )
        .execute();
    },
    async delete(name, ex = db) {
      await ex.deleteFrom('secrets').where('name', '=', name).execute();
    },
    async list() {
      return db.selectFrom('secrets').select(['name', 'updated_at', 'updated_by']).orderBy('name').execute();
    },
    async importMissing(values) {
      const imported: string[] = [];
      for (const [name, value] of Object.entries(values)) {
        if (!value) continue;
        const res = await db
          .insertInto('secrets')
          .values({ name, value_enc: sealer.seal(value), updated_by: 'environment' })
          .onConflict((oc) => oc.column('name').doNothing())
          .executeTakeFirst();
        if (Number(res.numInsertedOrUpdatedRows ?? 0) > 0) imported.push(name);
      }
      return imported;
    },
  };
}

/**
 * Erasure: secrets last written by one of `names` (an erased admin's e-mail) keep no name of theirs
 * (`updated_by` becomes `[deleted]`); the values are the platform's and stay.
 */
export async function forgetSecretAuthor(ex: Kysely<DB>, names: string[]): Promise<void> {
  if (names.length)
    await ex.updateTable('secrets').set({ updated_by: '[deleted]' }).where('updated_by', 'in', names).execute();
}
