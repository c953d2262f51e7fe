/**
 * Approvals (docs/ARCHITECTURE.md, Approvals): a run pauses for a person before a tool call that needs approval.
 * - `workers.approvals`: the worker's rules `[{tool, mode}]` (a tool name, or a prefix ending in `*`; mode
 *   `always` or `once_per_run`); a project's default is `approvals` in its config.
 * - `agent_runs.status` gains `waiting_approval`: the run stopped before such a call; its queue job is completed.
 * - `approvals`: one row per call that waited (`tool_use_id` the model's call id; unique per run), its decision
 *   (`approved`, `denied`, `expired`), who decided, when and through which channel, and the reason.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table workers add column approvals jsonb not null default '[]';
    alter table agent_runs drop constraint agent_runs_status_check;
    alter table agent_runs add constraint agent_runs_status_check
      check (status in ('queued','running','waiting_approval','succeeded','failed','cancelled'));
    create table approvals (
      id serial primary key,
      project_id integer not null references projects(id) on delete cascade,
      run_id integer not null references agent_runs(id) on delete cascade,
      worker_id integer not null,
      tool text not null,
      tool_use_id text not null,
      input jsonb not null default '{}',
      status text not null default 'pending' check (status in ('pending','approved','denied','expired')),
      reason text,
      decided_by text,
      decided_by_user integer,
      channel text check (channel in ('web','api','messenger','email','system')),
      created_at timestamptz not null default now(),
      decided_at timestamptz,
      unique (run_id, tool_use_id)
    );
    create index approvals_project on approvals (project_id, status, id);
    create index approvals_pending on approvals (created_at) where status = 'pending';
  `.execute(db);
}
