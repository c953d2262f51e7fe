/**
 * Token usage rows (docs/ARCHITECTURE.md, Usage, budgets and the trial): one per LLM call, written by the worker
 * runtime and other LLM features.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table token_usage (
      id serial primary key,
      user_id integer references users(id) on delete cascade,
      project_id integer references projects(id) on delete set null,
      project_name text,
      worker_id integer,
      model text,
      source text not null default 'worker',
      input_tokens integer not null default 0,
      output_tokens integer not null default 0,
      cache_tokens integer not null default 0,
      total_tokens integer not null default 0,
      created_at timestamptz not null default now()
    );
    create index token_usage_user_time on token_usage (user_id, created_at);
    create index token_usage_worker_time on token_usage (worker_id, created_at);
    create index token_usage_project_time on token_usage (project_id, created_at);
  `.execute(db);
}
