/**
 * Access tokens, the CLI's device credentials, and outside MCP servers for workers.
 *
 * - `access_tokens`: a user's own credentials for programs (personal access tokens) and the CLI's device
 *   credentials (`kind = 'device'`, issued by the device link, tied to the device id). Only the SHA-256 of a
 *   token is stored, with a short display prefix; `scopes` is a JSON array of `read`, `write`, `admin`;
 *   `project_id` binds a token to one project (deleted with it).
 * - `auth_events_ip`: failed token attempts are counted per client address (throttling).
 * - `cli_links.device_id`, `hostname`: the device that asked for a link, so its credential names it.
 * - `mcp_servers`: a project's outside MCP servers (URL, headers sealed as one JSON object, the tools last
 *   listed); `workers.mcp_servers` names the ones a worker uses.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table access_tokens (
      id serial primary key,
      user_id integer not null references users(id) on delete cascade,
      name text not null,
      kind text not null default 'personal' check (kind in ('personal', 'device')),
      token_hash text not null unique,
      prefix text not null,
      scopes jsonb not null default '[]',
      project_id integer references projects(id) on delete cascade,
      device_id text,
      created_at timestamptz not null default now(),
      expires_at timestamptz,
      last_used_at timestamptz,
      last_used_ip text,
      revoked_at timestamptz
    );
    create index access_tokens_user on access_tokens (user_id, created_at desc);
    create index access_tokens_device on access_tokens (user_id, device_id) where device_id is not null;
    create index auth_events_ip on auth_events (ip, type, created_at);

    alter table cli_links add column device_id text;
    alter table cli_links add column hostname text;

    create table mcp_servers (
      id serial primary key,
      project_id integer not null references projects(id) on delete cascade,
      name text not null,
      url text not null,
      headers_enc text,
      header_names jsonb not null default '[]',
      tools jsonb not null default '[]',
      created_by integer references users(id) on delete set null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (project_id, name)
    );

    alter table workers add column mcp_servers jsonb not null default '[]';
  `.execute(db);
}
