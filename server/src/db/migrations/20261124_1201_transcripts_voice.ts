/**
 * Meeting transcripts and voice dictation.
 *
 * `transcripts`: one row per uploaded meeting (the transcript job). `status` is what clients see;
 * `finished_step` is the last pipeline step whose output is stored (audio, transcript, frames, vision, summary,
 * embedding), written in the same statement as that output, so a restarted pipeline resumes after it and never
 * repeats it. `pending` is true while the pipeline has work for the row.
 * `transcript_lease`: one row; the instance holding it (until `expires_at`) is the only one running the
 * pipeline, so one transcript is processed at a time across all instances.
 * `voice_usage`: estimated dictation seconds per user per UTC day; `voice_jobs`: dictations under way (a row
 * per clip, removed when it ends; `expires_at` bounds a row whose process died).
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table transcripts (
      id serial primary key,
      project_id integer not null references projects(id) on delete cascade,
      user_id integer not null references users(id) on delete cascade,
      job_id text not null unique,
      filename text not null,
      mime text not null,
      kind text not null check (kind in ('audio', 'video')),
      size_bytes bigint not null,
      embed_to_rag boolean not null default true,
      trial_mode boolean not null default false,
      status text not null default 'queued',
      progress_pct integer not null default 0,
      step_label text not null default 'Queued',
      error text,
      transcript_text text,
      summary_json jsonb,
      frames_json jsonb,
      frames_dropped integer not null default 0,
      source_file text,
      finished_step text,
      pending boolean not null default true,
      interruptions integer not null default 0,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      finished_at timestamptz
    );
    create index transcripts_project on transcripts (project_id, id desc);
    create index transcripts_pending on transcripts (id) where pending;
    create index transcripts_user on transcripts (user_id);

    create table transcript_lease (
      id integer primary key check (id = 1),
      holder text,
      transcript_id integer,
      expires_at timestamptz not null default 'epoch'
    );
    insert into transcript_lease (id) values (1);

    create table voice_usage (
      user_id integer not null references users(id) on delete cascade,
      day date not null,
      seconds integer not null default 0,
      primary key (user_id, day)
    );
    create table voice_jobs (
      id serial primary key,
      user_id integer not null references users(id) on delete cascade,
      started_at timestamptz not null default now(),
      expires_at timestamptz not null
    );
    create index voice_jobs_user on voice_jobs (user_id, expires_at);
  `.execute(db);
}
