/**
 * Issues, skills (with versions, forks and offered updates), wiki pages, pins and learnings
 * (docs/ARCHITECTURE.md, Issues, skills, wiki, files, pins, learnings).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table issue_counters (
      project_id integer primary key references projects(id) on delete cascade,
      last_number integer not null default 0
    );
    create table issues (
      project_id integer not null references projects(id) on delete cascade,
      number integer not null,
      title text not null,
      description text not null default '',
      status text not null default 'open' check (status in ('open','in_progress','blocked','deferred','closed')),
      assignee text,
      priority text not null default 'P2' check (priority in ('P0','P1','P2','P3')),
      labels jsonb not null default '[]',
      created_by text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      primary key (project_id, number)
    );
    create index issues_status on issues (project_id, status, number);
    create index issues_assignee on issues (project_id, assignee, number);
    create table issue_activity (
      id serial primary key,
      project_id integer not null,
      issue_number integer not null,
      kind text not null default 'log',
      author text not null,
      message text not null,
      ts timestamptz not null default now(),
      created_at timestamptz not null default now(),
      foreign key (project_id, issue_number) references issues(project_id, number) on delete cascade
    );
    create index issue_activity_issue on issue_activity (project_id, issue_number, id);

    create table skills (
      id serial primary key,
      owner_project integer references projects(id) on delete cascade,
      name text not null,
      description text not null default '',
      content text not null default '',
      version integer not null default 1,
      forked_from integer references skills(id) on delete set null,
      forked_version integer,
      created_by integer references users(id) on delete set null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create unique index skills_name on skills (coalesce(owner_project, 0), name);
    create index skills_forked_from on skills (forked_from);
    create table skill_versions (
      id serial primary key,
      skill_id integer not null references skills(id) on delete cascade,
      version integer not null,
      name text not null,
      description text not null,
      content text not null,
      author text not null,
      reason text not null,
      created_at timestamptz not null default now(),
      unique (skill_id, version)
    );
    create table skill_updates (
      id serial primary key,
      project_id integer not null references projects(id) on delete cascade,
      fork_id integer not null references skills(id) on delete cascade,
      source_id integer not null references skills(id) on delete cascade,
      from_version integer not null,
      to_version integer not null,
      status text not null default 'pending' check (status in ('pending','approved','rejected')),
      decided_by text,
      created_at timestamptz not null default now(),
      decided_at timestamptz
    );
    create unique index skill_updates_pending on skill_updates (fork_id) where status = 'pending';

    create table wiki_pages (
      project_id integer not null references projects(id) on delete cascade,
      path text not null,
      title text not null,
      content text not null,
      updated_by text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      primary key (project_id, path)
    );

    create table pins (
      id serial primary key,
      project_id integer not null references projects(id) on delete cascade,
      text text not null,
      issue_id integer,
      path text,
      position integer not null,
      created_by text,
      created_at timestamptz not null default now()
    );
    create index pins_project on pins (project_id, position);

    create table learnings (
      id serial primary key,
      project_id integer not null references projects(id) on delete cascade,
      text text not null,
      source text,
      tags jsonb not null default '[]',
      author text,
      created_at timestamptz not null default now()
    );
    create index learnings_project on learnings (project_id, created_at desc, id desc);
  `.execute(db);
}
