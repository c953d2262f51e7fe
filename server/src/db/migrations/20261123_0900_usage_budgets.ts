/**
 * The usage area (issue 9): where each call's key came from (`key_source`: own, platform, or trial — the
 * platform key drawing on the owner's trial), and reservations of model calls under way, so budgets hold
 * during a run. Existing rows are classified from their project: calls of trial-mode projects on the
 * platform key drew on the trial; the help assistant always used the platform key.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table token_usage add column key_source text not null default 'own'
      check (key_source in ('own', 'platform', 'trial'));
    update token_usage set key_source = 'trial'
      where project_id in (select id from projects where trial_mode and uses_platform_key);
    update token_usage set key_source = 'platform' where source = 'help';
    create index token_usage_user_source_time on token_usage (user_id, key_source, created_at);

    create table token_reservations (
      id bigserial primary key,
      user_id integer not null references users(id) on delete cascade,
      project_id integer references projects(id) on delete cascade,
      worker_id integer,
      run_id integer,
      key_source text not null check (key_source in ('own', 'platform', 'trial')),
      tokens integer not null check (tokens >= 0),
      created_at timestamptz not null default now(),
      expires_at timestamptz not null
    );
    create index token_reservations_worker on token_reservations (worker_id, expires_at);
    create index token_reservations_user on token_reservations (user_id, key_source, expires_at);
  `.execute(db);
}
