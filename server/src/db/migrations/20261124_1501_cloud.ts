/**
 * Cloud containers: one row per user's container (its runtime id, status, flags, the sealed SSH key), the
 * cloud waitlist, the containers' log lines (kept so any instance can serve the log stream), and the lease of
 * the lifecycle sweep (so it runs once across instances).
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table cloud_containers (
      user_id integer primary key references users(id) on delete cascade,
      container_id text not null,
      runtime text not null,
      status text not null check (status in ('provisioning', 'ready', 'paused', 'suspended', 'deleted')),
      server_ip text,
      port integer,
      internal_port integer,
      agent_authed boolean not null default false,
      codehost_authed boolean not null default false,
      ssh_public_key text,
      ssh_private_enc text,
      last_active timestamptz not null default now(),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index cloud_containers_idle on cloud_containers (status, last_active);

    create table cloud_waitlist (
      id bigserial primary key,
      user_id integer not null unique references users(id) on delete cascade,
      status text not null default 'waiting' check (status in ('waiting', 'invited', 'activated')),
      note text,
      joined_at timestamptz not null default now(),
      invited_at timestamptz,
      activated_at timestamptz
    );

    create table cloud_log_lines (
      id bigserial primary key,
      user_id integer not null references users(id) on delete cascade,
      line text not null,
      created_at timestamptz not null default now()
    );
    create index cloud_log_lines_user on cloud_log_lines (user_id, id);
    create index cloud_log_lines_time on cloud_log_lines (created_at);

    create table cloud_leases (
      name text primary key,
      until timestamptz not null
    );
  `.execute(db);
}
