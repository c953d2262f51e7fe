/**
 * The command-line client (CLI): its devices (one row per user and device, kept fresh by heartbeats), device
 * links (a one-time code the CLI shows, confirmed by a signed-in user, then exchanged once for a token through
 * the link stream) and session transcripts (gzip of the raw jsonl, one per owner and session id).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table cli_devices (
      user_id integer not null references users(id) on delete cascade,
      device_id text not null,
      hostname text not null default '',
      platform text not null default '',
      arc_version text not null default '',
      last_project text,
      first_seen timestamptz not null default now(),
      last_seen timestamptz not null default now(),
      primary key (user_id, device_id)
    );
    create index cli_devices_recent on cli_devices (user_id, last_seen desc);

    create table cli_links (
      code text primary key,
      secret_hash text not null unique,
      user_id integer references users(id) on delete cascade,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      confirmed_at timestamptz,
      claimed_at timestamptz
    );
    create index cli_links_user on cli_links (user_id, confirmed_at desc);
    create index cli_links_expiry on cli_links (expires_at);

    create table cli_transcripts (
      id serial primary key,
      owner_id integer not null references users(id) on delete cascade,
      project_id integer not null references projects(id) on delete cascade,
      session_id text not null,
      worker_id integer,
      mode text not null default '',
      device_id text,
      first_prompt text not null default '',
      message_count integer not null default 0,
      size_bytes integer not null default 0,
      gzip bytea not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (owner_id, session_id)
    );
    create index cli_transcripts_project on cli_transcripts (project_id, owner_id, updated_at desc);
  `.execute(db);
}
