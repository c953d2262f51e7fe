/**
 * Forward-only migrations, applied at start. Kysely's Migrator runs them in
 * one transaction under `pg_advisory_xact_lock`, so two instances starting together apply each once.
 */
import { sql, type Kysely } from 'kysely';
import { DEFAULT_MIGRATION_TABLE, Migrator } from 'kysely/migration';
import { migrations } from './migrations/index.ts';

/** Kysely's table of applied migrations (the Migrator's default name). */
const MIGRATION_TABLE = DEFAULT_MIGRATION_TABLE;

/**
 * Apply every pending migration. When none is pending (one query) the Migrator is not run: its own check
 * introspects every table and column of the database, 70–400 ms on the embedded database at each start.
 * @returns the names applied by this call (empty when up to date).
 * @throws Error naming the migration that failed.
 */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  if (await migrationsApplied(db)) return [];
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

/**
 * True when every migration of this version is recorded in Kysely's migration table (`/readyz`, and the
 * start's shortcut above): one catalog lookup and one small select.
 */
export async function migrationsApplied(db: Kysely<any>): Promise<boolean> {
  const table = await sql<{ ok: boolean }>`select to_regclass(${MIGRATION_TABLE}::text) is not null as ok`.execute(db);
  if (!table.rows[0]?.ok) return false;
  const done = await sql<{ name: string }>`select name from ${sql.table(MIGRATION_TABLE)}`.execute(db);
  const names = new Set(done.rows.map((r) => r.name));
  return Object.keys(migrations).every((name) => names.has(name));
}
