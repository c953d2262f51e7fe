/**
 * Privacy and admin analytics: the export history (three exports per user per 24 hours, kept 365 days), the
 * retention runs (one row per UTC day: the daily purge runs once across instances), and the indexes the
 * retention purge and the analytics read by time.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table export_history (
      id bigserial primary key,
      user_id integer not null references users(id) on delete cascade,
      created_at timestamptz not null default now()
    );
    create index export_history_user_time on export_history (user_id, created_at);
    create index export_history_time on export_history (created_at);

    create table retention_runs (
      day text primary key,
      started_at timestamptz not null default now(),
      finished_at timestamptz,
      deleted jsonb not null default '{}'
    );

    create index if not exists chat_messages_time on chat_messages (created_at);
    create index if not exists activity_log_time on activity_log (created_at);
    create index if not exists auth_events_time on auth_events (created_at);
    create index if not exists token_usage_time on token_usage (created_at);
  `.execute(db);
}
