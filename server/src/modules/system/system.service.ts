/**
 * Health and readiness (our own additions: `GET /healthz`, `GET /readyz`). Ready means the database
 * answers and no migration is pending.
 */
import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/database.ts';
import { migrationsApplied } from '../../db/migrate.ts';
import type { DB } from '../../db/types.ts';

export type Readiness =
  | { ok: true; database: string; vector_search: 'pgvector-hnsw' | 'exact-scan' }
  | { ok: false; reason: 'migrations_pending' | 'database_unreachable' };

export function createSystemService(deps: { db: Kysely<DB>; database: Pick<Database, 'kind' | 'vector'> }) {
  return {
    /** `GET /readyz`: the database answers and every migration is applied. Never throws. */
    async readiness(): Promise<Readiness> {
      try {
        await sql`select 1`.execute(deps.db);
        if (!(await migrationsApplied(deps.db))) return { ok: false, reason: 'migrations_pending' };
        return {
          ok: true,
          database: deps.database.kind,
          vector_search: deps.database.vector ? 'pgvector-hnsw' : 'exact-scan',
        };
      } catch {
        return { ok: false, reason: 'database_unreachable' };
      }
    },
  };
}

export type SystemService = ReturnType<typeof createSystemService>;
