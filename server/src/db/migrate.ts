/**
 * Forward-only migrations, applied at start (specification, Versioning). Kysely's Migrator runs them in
 * one transaction under `pg_advisory_xact_lock`, so two instances starting together apply each once.
 */
import { Migrator, type Kysely } from 'kysely';
import { migrations } from './migrations/index.ts';

/**
 * Apply every pending migration.
 * @returns the names applied by this call (empty when up to date).
 * @throws Error naming the migration that failed.
 */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(
      `migration ${failed?.migrationName ?? '(unknown)'} failed: ${(error as Error).message ?? String(error)}`,
    );
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** True when no migration is pending (used by `/readyz`). */
export async function migrationsApplied(db: Kysely<any>): Promise<boolean> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    allowUnorderedMigrations: true,
  });
  const list = await migrator.getMigrations();
  return list.every((m) => m.executedAt !== undefined);
}
