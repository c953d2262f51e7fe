/**
 * Signing in with an identity provider, the code host connection and the e-mail API's delivery retries.
 *
 * - `user_identities`: an account's identity at an OpenID provider (issuer + subject, unique), with the e-mail
 *   the provider gave; an account has at most one identity per issuer.
 * - `users.password_hash` may be null: an account made through the identity provider has no password until its
 *   user sets one (password reset).
 * - `codehost_links`: one code host connection per account, its OAuth access token sealed.
 * - `outbox`: which transport handled a message (`api`, `smtp`, none), the delivery attempts, and `retrying`
 *   while a failed delivery waits for its next attempt; `platform_audit` records `delete` (a secret unset).
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table user_identities (
      id serial primary key,
      user_id integer not null references users(id) on delete cascade,
      issuer text not null,
      subject text not null,
      email text,
      created_at timestamptz not null default now(),
      unique (issuer, subject),
      unique (user_id, issuer)
    );
    alter table users alter column password_hash drop not null;
    create table codehost_links (
      user_id integer primary key references users(id) on delete cascade,
      login text not null,
      codehost_user_id text not null,
      token_enc text not null,
      scopes text not null default '',
      created_at timestamptz not null default now()
    );
    alter table outbox add column transport text check (transport in ('api', 'smtp'));
    alter table outbox add column attempts integer not null default 0;
    alter table outbox drop constraint outbox_status_check;
    alter table outbox add constraint outbox_status_check check (status in ('kept', 'sent', 'failed', 'retrying'));
    alter table platform_audit drop constraint platform_audit_action_check;
    alter table platform_audit add constraint platform_audit_action_check
      check (action in ('set', 'test', 'restart', 'delete'));
  `.execute(db);
}
