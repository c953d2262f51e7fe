/**
 * Worker runtime (issue 6): chat messages, agent runs (one per worker per message, with timings for the
 * latency analytics and the cascade flag), the active role per user and project, and the run a
 * token_usage row belongs to.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table chat_messages (
      id serial primary key,
      project_id integer not null references projects(id) on delete cascade,
      user_id integer references users(id) on delete set null,
      worker_id integer,
      recipients jsonb not null default '[]',
      role text not null check (role in ('user','assistant')),
      content text not null,
      run_id integer,
      created_at timestamptz not null default now()
    );
    create index chat_messages_project on chat_messages (project_id, id);
    create index chat_messages_worker on chat_messages (project_id, worker_id, id);
    create table agent_runs (
      id serial primary key,
      project_id integer not null references projects(id) on delete cascade,
      user_id integer references users(id) on delete set null,
      worker_id integer not null references workers(id) on delete cascade,
      message_id integer not null references chat_messages(id) on delete cascade,
      engine text not null default 'builtin',
      status text not null default 'queued' check (status in ('queued','running','succeeded','failed','cancelled')),
      requested_model text,
      model text,
      cascade boolean not null default false,
      turns integer not null default 0,
      tool_calls jsonb not null default '[]',
      error text,
      error_message text,
      reply_message_id integer,
      input_tokens integer not null default 0,
      output_tokens integer not null default 0,
      cache_tokens integer not null default 0,
      total_tokens integer not null default 0,
      cancel_requested boolean not null default false,
      retry_of integer,
      instance_id text,
      created_at timestamptz not null default now(),
      started_at timestamptz,
      heartbeat_at timestamptz,
      finished_at timestamptz,
      queue_ms integer,
      prep_ms integer,
      gen_ms integer,
      total_ms integer
    );
    create index agent_runs_project on agent_runs (project_id, id);
    create index agent_runs_worker_status on agent_runs (worker_id, status);
    create index agent_runs_status on agent_runs (status) where status in ('queued','running');
    create index agent_runs_finished on agent_runs (finished_at);
    create table chat_active_roles (
      project_id integer not null references projects(id) on delete cascade,
      user_id integer not null references users(id) on delete cascade,
      worker_id integer not null references workers(id) on delete cascade,
      updated_at timestamptz not null default now(),
      primary key (project_id, user_id)
    );
    alter table token_usage add column run_id integer;
    create index token_usage_run on token_usage (run_id);
    create index activity_log_type_time on activity_log (type, created_at);
  `.execute(db);
}
