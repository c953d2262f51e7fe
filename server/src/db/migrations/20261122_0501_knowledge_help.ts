/**
 * Shared semantic index, help assistant (issue 5).
 *
 * Vectors are stored as `real[]` with their `embedder` id and `dims` on every chunk, so the table works on
 * any PostgreSQL (exact scan) and a change of embedder never mixes spaces. Where pgvector exists, the
 * knowledge module creates at start an HNSW index over the expression `(embedding::vector(<dims>))`
 * restricted to `dims = <dims>` (one partial index per dimension in use); a migration cannot assume the
 * extension, so nothing here depends on it. Full-text search: a stored tsvector (title weight A, text B)
 * with a GIN index.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table knowledge_documents (
      id serial primary key,
      project_id integer references projects(id) on delete cascade,
      doc_type text not null,
      doc_id text not null,
      scope text not null check (scope in ('project','global')),
      title text not null default '',
      content_hash text,
      embedder text,
      dims integer,
      chunk_count integer not null default 0,
      indexed_at timestamptz not null default now()
    );
    create unique index knowledge_documents_key on knowledge_documents ((coalesce(project_id, 0)), doc_type, doc_id);
    create table knowledge_chunks (
      id bigserial primary key,
      document_id integer not null references knowledge_documents(id) on delete cascade,
      project_id integer references projects(id) on delete cascade,
      doc_type text not null,
      doc_id text not null,
      scope text not null,
      chunk_ix integer not null,
      title text not null default '',
      text text not null,
      embedder text not null,
      dims integer not null,
      embedding real[] not null,
      tsv tsvector generated always as (setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', text), 'B')) stored
    );
    create index knowledge_chunks_document on knowledge_chunks (document_id);
    create index knowledge_chunks_project on knowledge_chunks (project_id, doc_type);
    create index knowledge_chunks_global on knowledge_chunks (doc_type) where scope = 'global';
    create index knowledge_chunks_tsv on knowledge_chunks using gin (tsv);

    create table help_messages (
      id serial primary key,
      user_id integer not null references users(id) on delete cascade,
      role text not null check (role in ('user','assistant')),
      text text not null,
      sources jsonb not null default '[]',
      created_at timestamptz not null default now()
    );
    create index help_messages_user on help_messages (user_id, id);
    create table help_usage (
      user_id integer not null references users(id) on delete cascade,
      day date not null,
      used integer not null default 0,
      primary key (user_id, day)
    );
  `.execute(db);
}
