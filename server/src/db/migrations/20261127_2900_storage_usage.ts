/**
 * Storage quotas (the usage area): one row per user with the bytes their files hold, as last measured plus what
 * was granted to writes since (`bytes`), and when it was measured (`measured_at`). A row older than the
 * measurement's lifetime is measured again before the next write is granted (docs/ARCHITECTURE.md, Storage quotas).
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table storage_usage (
      user_id integer primary key,
      bytes bigint not null,
      measured_at timestamptz not null
    );
  `.execute(db);
}
