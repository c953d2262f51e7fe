/**
 * Throttling state shared by every instance: one row per rate-limit key (a SHA-256 of the limit's name and what
 * it counts — an address, an account, a user — never the value itself), its hits in the current window and when
 * the window (or the backoff) ends.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table rate_limit_hits (
      key text primary key,
      hits integer not null,
      reset_at timestamptz not null
    );
    create index rate_limit_hits_reset on rate_limit_hits (reset_at);
  `.execute(db);
}
