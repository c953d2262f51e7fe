/**
 * Projects, workers, plan limits and onboarding (issue 3): extends `projects` and `workers` of 0001 and
 * adds worker templates, trials, onboarding progress and videos, token usage and active-issue bindings.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table projects add column uses_platform_key boolean not null default false;
    alter table projects add column icon_key text;
    alter table workers add column icon_key text;
    alter table workers add column avatar_key text;
    alter table workers add column messenger_token_enc text;
    alter table workers add column messenger_bot_id text;
    alter table workers add column messenger_bot_username text;
    alter table workers add column session_seen_at timestamptz;
    create unique index workers_messenger_bot on workers (messenger_bot_id) where messenger_bot_id is not null;
    create index projects_owner on projects (owner_id, id);

    create table worker_templates (
      id serial primary key,
      owner_id integer not null references users(id) on delete cascade,
      name text not null,
      description text not null default '',
      config jsonb not null default '{}',
      is_public boolean not null default false,
      created_at timestamptz not null default now()
    );
    create index worker_templates_owner on worker_templates (owner_id, id);

    create table trials (
      user_id integer primary key references users(id) on delete cascade,
      project_id integer references projects(id) on delete set null,
      tokens_granted bigint not null,
      granted_at timestamptz not null default now()
    );

    create table onboarding_progress (
      user_id integer primary key references users(id) on delete cascade,
      state jsonb not null default '{}',
      source text check (source in ('web','cli')),
      completed_at timestamptz,
      dismissed_at timestamptz,
      started_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );

    create table onboarding_videos (
      slot text primary key,
      url text,
      seconds integer not null default 0,
      title text not null,
      updated_at timestamptz not null default now(),
      updated_by text
    );


    create table active_issue_bindings (
      id serial primary key,
      project_id integer not null references projects(id) on delete cascade,
      user_id integer references users(id) on delete cascade,
      issue_id integer not null,
      title text,
      source text not null default 'web',
      created_at timestamptz not null default now()
    );
    create index active_issue_bindings_project on active_issue_bindings (project_id, created_at desc);
  `.execute(db);
}
