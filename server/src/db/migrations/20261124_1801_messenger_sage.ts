/**
 * Messenger workers that answer, and marketplace scouting of skills.
 *
 * Messenger: one `messenger_pollers` row per bot (the lease that lets exactly one instance poll it, and the
 * `getUpdates` offset), `messenger_updates` (every update handled, so none is handled twice), `messenger_replies`
 * (a run started by a messenger message and the chat its reply goes to) and `messenger_link_codes` (one-time
 * codes linking a messenger chat to an account; only their sha256 is stored).
 *
 * Sage: `sage_results` keeps skill reviews and benchmarks; `sage_catalog_state` the shipped catalog's size and
 * last index time.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table messenger_pollers (
      bot_id text primary key,
      worker_id integer not null references workers(id) on delete cascade,
      update_offset bigint not null default 0,
      lease_owner text,
      lease_expires_at timestamptz,
      polling_since timestamptz,
      updated_at timestamptz not null default now()
    );
    create index messenger_pollers_worker on messenger_pollers (worker_id);

    create table messenger_updates (
      bot_id text not null,
      update_id bigint not null,
      worker_id integer references workers(id) on delete cascade,
      chat_id text,
      kind text not null,
      run_id integer,
      created_at timestamptz not null default now(),
      primary key (bot_id, update_id)
    );
    create index messenger_updates_time on messenger_updates (created_at);

    create table messenger_replies (
      run_id integer primary key,
      project_id integer not null references projects(id) on delete cascade,
      worker_id integer not null references workers(id) on delete cascade,
      chat_id text not null,
      created_at timestamptz not null default now(),
      sent_at timestamptz
    );
    create index messenger_replies_pending on messenger_replies (created_at) where sent_at is null;

    create table messenger_link_codes (
      code_hash text primary key,
      user_id integer not null references users(id) on delete cascade,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      used_at timestamptz
    );
    create index messenger_link_codes_user on messenger_link_codes (user_id);

    create table sage_results (
      id serial primary key,
      kind text not null check (kind in ('analyze', 'benchmark')),
      skill_ref text not null,
      skill_name text not null,
      user_id integer references users(id) on delete cascade,
      project_id integer references projects(id) on delete cascade,
      score real,
      model text,
      result jsonb not null,
      created_at timestamptz not null default now()
    );
    create index sage_results_user on sage_results (user_id, created_at desc);

    create table sage_catalog_state (
      id smallint primary key default 1 check (id = 1),
      size integer not null default 0,
      content_hash text,
      indexed_at timestamptz
    );
  `.execute(db);
}
