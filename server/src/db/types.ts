/**
 * Table types for Kysely. Each area declares its tables in one interface; `DB` joins them.
 * `Generated<T>` marks columns with a database default.
 */
import type { ColumnType, Generated } from 'kysely';

/** A timestamptz column: read as Date; written as Date or ISO string. */
export type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** A timestamptz column with a database default (may be omitted on insert). */
export type TimestampDefault = ColumnType<Date, Date | string | undefined, Date | string>;
/** A json/jsonb column: read parsed; written as a JSON string (`JSON.stringify`). */
export type Json<T = unknown> = ColumnType<T, string, string>;
/** A json/jsonb column with a database default. */
export type JsonDefault<T = unknown> = ColumnType<T, string | undefined, string>;

export interface FoundationTables {
  users: {
    id: Generated<number>;
    email: string;
    name: string | null;
    password_hash: string;
    role: Generated<'user' | 'admin'>;
    plan: Generated<string>;
    email_verified: Generated<boolean>;
    password_version: Generated<number>;
    chat_id: string | null;
    heard_source: string | null;
    created_at: TimestampDefault;
    updated_at: TimestampDefault;
  };
  invites: {
    code: string;
    note: string | null;
    created_by: number | null;
    created_at: TimestampDefault;
    used_by: number | null;
    used_at: Timestamp | null;
  };
  signups: { id: Generated<number>; ip: string; user_id: number | null; created_at: TimestampDefault };
  email_tokens: {
    id: Generated<number>;
    user_id: number;
    kind: 'verify' | 'reset';
    token_hash: string;
    expires_at: Timestamp;
    used_at: Timestamp | null;
    created_at: TimestampDefault;
  };
  outbox: {
    id: Generated<number>;
    to_addr: string;
    subject: string;
    text_body: string;
    html_body: string | null;
    headers: Json<Record<string, string>>;
    kind: string;
    status: 'kept' | 'sent' | 'failed';
    error: string | null;
    created_at: TimestampDefault;
    sent_at: Timestamp | null;
  };
  beta_waitlist: {
    id: Generated<number>;
    email: string;
    message: string | null;
    status: Generated<'open' | 'approved' | 'rejected'>;
    invite_code: string | null;
    created_at: TimestampDefault;
    decided_at: Timestamp | null;
  };
  secrets: { name: string; value_enc: string; updated_at: TimestampDefault; updated_by: string | null };
  account_settings: {
    user_id: number;
    llm_key_enc: string | null;
    upload_transcripts: Generated<boolean>;
    updated_at: TimestampDefault;
  };
  auth_events: {
    id: Generated<number>;
    user_id: number | null;
    type: string;
    ip: string | null;
    user_agent: string | null;
    created_at: TimestampDefault;
  };
  projects: {
    id: Generated<number>;
    owner_id: number;
    name: string;
    display_name: string;
    description: Generated<string>;
    icon: string | null;
    color: string | null;
    niche: string | null;
    team_preset: string | null;
    config: JsonDefault<Record<string, unknown>>;
    protocol: Generated<string>;
    trial_mode: Generated<boolean>;
    created_at: TimestampDefault;
    updated_at: TimestampDefault;
  };
  workers: {
    id: Generated<number>;
    project_id: number;
    label: string;
    icon: string | null;
    type: Generated<'terminal' | 'messenger'>;
    model: string | null;
    max_turns: Generated<number>;
    tools: JsonDefault<string[]>;
    system_prompt: Generated<string>;
    focus_dirs: JsonDefault<string[]>;
    context_assets: JsonDefault<string[]>;
    prompt_style: string | null;
    avatar_pack: Generated<string>;
    role: string | null;
    position: Generated<number>;
    status: Generated<'working' | 'idle'>;
    status_started_at: Timestamp | null;
    current_skill: string | null;
    created_at: TimestampDefault;
    updated_at: TimestampDefault;
  };
  activity_log: {
    id: Generated<number>;
    user_id: number | null;
    actor: string | null;
    project_id: number | null;
    worker_id: number | null;
    type: string;
    title: string | null;
    detail: string | null;
    payload: JsonDefault<Record<string, unknown>>;
    created_at: TimestampDefault;
  };
}

export interface UsageTables {
  token_usage: {
    id: Generated<number>;
    user_id: number | null;
    project_id: number | null;
    project_name: string | null;
    worker_id: number | null;
    model: string | null;
    /** What made the call: worker, help, transcript, note_chat, … */
    source: Generated<string>;
    input_tokens: Generated<number>;
    output_tokens: Generated<number>;
    cache_tokens: Generated<number>;
    total_tokens: Generated<number>;
    created_at: TimestampDefault;
  };
}

/** Shared semantic index and help assistant (issue 5). */
export interface KnowledgeTables {
  knowledge_documents: {
    id: Generated<number>;
    /** null: a global document (global skill, public doc). */
    project_id: number | null;
    doc_type: string;
    doc_id: string;
    scope: 'project' | 'global';
    title: Generated<string>;
    /** sha256 of title, scope and text; null marks the document for re-indexing. */
    content_hash: string | null;
    embedder: string | null;
    dims: number | null;
    chunk_count: Generated<number>;
    indexed_at: TimestampDefault;
  };
  knowledge_chunks: {
    id: Generated<number>;
    document_id: number;
    project_id: number | null;
    doc_type: string;
    doc_id: string;
    scope: 'project' | 'global';
    chunk_ix: number;
    title: Generated<string>;
    text: string;
    embedder: string;
    dims: number;
    /** real[]; written as a `'{…}'::real[]` literal. */
    embedding: ColumnType<number[], unknown, unknown>;
    tsv: ColumnType<string, never, never>;
  };
  help_messages: {
    id: Generated<number>;
    user_id: number;
    role: 'user' | 'assistant';
    text: string;
    sources: JsonDefault<string[]>;
    created_at: TimestampDefault;
  };
  help_usage: { user_id: number; day: string; used: Generated<number> };
}

export interface DB extends FoundationTables, UsageTables, KnowledgeTables {}
