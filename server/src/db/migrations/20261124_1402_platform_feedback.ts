/**
 * Platform secrets' audit, feedback and translation feedback. `platform_audit` is append-only at the database
 * level: a trigger refuses every UPDATE and DELETE (and TRUNCATE), whoever issues it.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table platform_audit (
      id bigserial primary key,
      key_name text not null,
      action text not null check (action in ('set', 'test', 'restart')),
      ok boolean,
      client_ip text,
      user_agent text,
      actor_email text,
      created_at timestamptz not null default now()
    );
    create index platform_audit_key on platform_audit (key_name, id);

    create function platform_audit_append_only() returns trigger language plpgsql as $$
    begin
      raise exception 'platform_audit is append-only' using errcode = 'insufficient_privilege';
    end
    $$;
    create trigger platform_audit_no_update before update or delete on platform_audit
      for each row execute function platform_audit_append_only();
    create trigger platform_audit_no_truncate before truncate on platform_audit
      for each statement execute function platform_audit_append_only();

    create table feedback_reports (
      id bigserial primary key,
      user_id integer references users(id) on delete cascade,
      type text not null check (type in ('bug', 'feature', 'other')),
      title text not null,
      description text not null,
      project text,
      browser text,
      created_at timestamptz not null default now()
    );
    create index feedback_reports_time on feedback_reports (id desc);

    create table translation_feedback (
      id bigserial primary key,
      user_id integer references users(id) on delete cascade,
      locale text not null,
      msgid text not null,
      suggestion text not null,
      severity text not null check (severity in ('minor', 'major', 'wrong')),
      current_translation text,
      page_url text,
      status text not null default 'open' check (status in ('open', 'accepted', 'rejected')),
      note text,
      reviewed_by text,
      reviewed_at timestamptz,
      created_at timestamptz not null default now()
    );
    create index translation_feedback_locale on translation_feedback (locale, status, id desc);
    create index translation_feedback_msgid on translation_feedback (msgid, status);
  `.execute(db);
}
