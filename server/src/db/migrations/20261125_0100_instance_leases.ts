/**
 * Crash recovery (docs/ARCHITECTURE.md, "Crash recovery and instance leases").
 *
 * - `instances`: one row per process of the service, holding a lease (`expires_at`, renewed every few seconds).
 *   A row whose lease lapsed, or whose process is known to be gone, is marked stopped by the instance that
 *   noticed, and the work it held is taken back at once.
 * - `agent_runs.journal`: what a running run has done so far (the model's answers, tool results, and a tool
 *   with effects that was started), so a run taken back resumes after its last completed step instead of
 *   repeating it; `replays` counts the times it was taken back; `job_id` is the queue job executing it.
 * - `token_reservations`: the instance that made a reservation and what the call was (project name, model,
 *   source, prompt estimate), so a call cut by a crash is charged as a usage row (`token_usage.estimated`) instead of vanishing.
 * - `issues.origin_key`: the agent tool call that created an issue, so the call made again after a crash finds
 *   that issue instead of creating a second one.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table instances (
      id text primary key,
      name text not null,
      host text not null,
      boot_id text,
      pid integer not null,
      process_started_at timestamptz not null,
      started_at timestamptz not null default now(),
      renewed_at timestamptz not null default now(),
      expires_at timestamptz not null,
      stopped_at timestamptz,
      stop_reason text
    );
    create index instances_live on instances (expires_at) where stopped_at is null;

    alter table agent_runs add column journal jsonb;
    alter table agent_runs add column replays integer not null default 0;
    alter table agent_runs add column job_id text;

    alter table token_reservations add column instance_id text;
    alter table token_reservations add column project_name text;
    alter table token_reservations add column model text;
    alter table token_reservations add column source text;
    alter table token_reservations add column prompt_tokens integer;
    create index token_reservations_instance on token_reservations (instance_id);
    create index token_reservations_run on token_reservations (run_id) where run_id is not null;

    alter table token_usage add column estimated boolean not null default false;

    alter table issues add column origin_key text;
    create unique index issues_origin_key on issues (project_id, origin_key) where origin_key is not null;
  `.execute(db);
}
