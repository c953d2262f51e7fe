/**
 * Research notes: notes of a project, their sources (files, web pages, YouTube videos) with the text
 * extracted from them, the note's chat, the issues the chat created, and chunked-upload sessions.
 *
 * A source's file lives under `DATA_DIR/notes/<project id>/<note id>/`; `file_name` is its name there.
 * Upload sessions are rows (not process memory), so any instance can take the next chunk; `writing_since`
 * is a short lease that keeps two requests from writing the same chunk at once.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table notes (
      id serial primary key,
      project_id integer not null references projects(id) on delete cascade,
      title text not null,
      description text not null default '',
      created_by integer references users(id) on delete set null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index notes_project on notes (project_id, id);

    create table note_sources (
      id serial primary key,
      note_id integer not null references notes(id) on delete cascade,
      project_id integer not null references projects(id) on delete cascade,
      source_type text not null
        check (source_type in ('youtube','web','video','audio','pdf','docx','txt','markdown','image')),
      title text,
      default_title text not null,
      url text,
      file_name text,
      mime text,
      size_bytes bigint,
      status text not null default 'queued' check (status in ('queued','processing','done','error')),
      message text not null default '',
      error text,
      content_text text,
      duration_seconds integer,
      processing_since timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index note_sources_note on note_sources (note_id, id);
    create index note_sources_processing on note_sources (processing_since) where status = 'processing';

    create table note_chat_messages (
      id serial primary key,
      note_id integer not null references notes(id) on delete cascade,
      user_id integer references users(id) on delete set null,
      role text not null check (role in ('user','assistant')),
      content text not null,
      sources jsonb not null default '[]',
      created_at timestamptz not null default now()
    );
    create index note_chat_messages_note on note_chat_messages (note_id, id);

    create table note_issue_links (
      note_id integer not null references notes(id) on delete cascade,
      issue_id integer not null,
      title text not null,
      created_at timestamptz not null default now(),
      primary key (note_id, issue_id)
    );

    create table note_uploads (
      id text primary key,
      note_id integer not null references notes(id) on delete cascade,
      project_id integer not null references projects(id) on delete cascade,
      user_id integer not null references users(id) on delete cascade,
      filename text not null,
      mime text not null,
      source_type text not null,
      size_bytes bigint not null,
      chunk_size integer not null,
      next_index integer not null default 0,
      received_bytes bigint not null default 0,
      writing_since timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index note_uploads_user on note_uploads (user_id);
    create index note_uploads_idle on note_uploads (updated_at);
  `.execute(db);
}
