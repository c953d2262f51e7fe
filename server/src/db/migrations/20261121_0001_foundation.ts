/** Foundation: accounts, invites, waitlist, e-mail outbox, secret store, settings, activity log, projects and workers. */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table users (
      id serial primary key,
      email text not null unique,
      name text,
      password_hash text not null,
      role text not null default 'user' check (role in ('user','admin')),
      plan text not null default 'free' check (plan in ('free','min','cloud','max','starter','starter_cloud','beta')),
      email_verified boolean not null default false,
      password_version integer not null default 0,
      chat_id text,
      heard_source text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create table invites (
      code text primary key,
      note text,
      created_by integer references users(id) on delete set null,
      created_at timestamptz not null default now(),
      used_by integer references users(id) on delete set null,
      used_at timestamptz
    );
    create table signups (
      id serial primary key,
      ip text not null,
      user_id integer references users(id) on delete set null,
      created_at timestamptz not null default now()
    );
    create index signups_ip_time on signups (ip, created_at);
    create table email_tokens (
      id serial primary key,
      user_id integer not null references users(id) on delete cascade,
      kind text not null check (kind in ('verify','reset')),
      token_hash text not null unique,
      expires_at timestamptz not null,
      used_at timestamptz,
      created_at timestamptz not null default now()
    );
    create table outbox (
      id serial primary key,
      to_addr text not null,
      subject text not null,
      text_body text not null,
      html_body text,
      headers jsonb not null default '{}',
      kind text not null,
      status text not null check (status in ('kept','sent','failed')),
      error text,
      created_at timestamptz not null default now(),
      sent_at timestamptz
    );
    create table beta_waitlist (
      id serial primary key,
      email text not null,
      message text,
      status text not null default 'open' check (status in ('open','approved','rejected')),
      invite_code text,
      created_at timestamptz not null default now(),
      decided_at timestamptz
    );
    create unique index beta_waitlist_open_email on beta_waitlist (email) where status = 'open';
    create table secrets (
      name text primary key,
      value_enc text not null,
      updated_at timestamptz not null default now(),
      updated_by text
    );
    create table account_settings (
      user_id integer primary key references users(id) on delete cascade,
      llm_key_enc text,
      upload_transcripts boolean not null default false,
      updated_at timestamptz not null default now()
    );
    create table auth_events (
      id serial primary key,
      user_id integer references users(id) on delete cascade,
      type text not null,
      ip text,
      user_agent text,
      created_at timestamptz not null default now()
    );
    create index auth_events_user on auth_events (user_id, created_at);
    create table projects (
      id serial primary key,
      owner_id integer not null references users(id) on delete cascade,
      name text not null,
      display_name text not null,
      description text not null default '',
      icon text,
      color text,
      niche text,
      team_preset text,
      config jsonb not null default '{"modelMode":"strict"}',
      protocol text not null default '',
      trial_mode boolean not null default false,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (owner_id, name)
    );
    create table workers (
      id serial primary key,
      project_id integer not null references projects(id) on delete cascade,
      label text not null,
      icon text,
      type text not null default 'terminal' check (type in ('terminal','messenger')),
      model text,
      max_turns integer not null default 20,
      tools jsonb not null default '[]',
      system_prompt text not null default '',
      focus_dirs jsonb not null default '[]',
      context_assets jsonb not null default '[]',
      prompt_style text,
      avatar_pack text not null default 'role',
      role text,
      position integer not null default 0,
      status text not null default 'idle' check (status in ('working','idle')),
      status_started_at timestamptz,
      current_skill text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index workers_project on workers (project_id, position);
    create table activity_log (
      id serial primary key,
      user_id integer references users(id) on delete set null,
      actor text,
      project_id integer references projects(id) on delete cascade,
      worker_id integer,
      type text not null,
      title text,
      detail text,
      payload jsonb not null default '{}',
      created_at timestamptz not null default now()
    );
    create index activity_log_user on activity_log (user_id, type, created_at);
    create index activity_log_project on activity_log (project_id, created_at);
    create index activity_log_worker on activity_log (worker_id, created_at);
  `.execute(db);
}
