/**
 * A project name names one project across the service (every path names a project without its owner):
 * names were unique per owner, now they are unique overall.
 *
 * Existing duplicates are renamed before the unique index is added: for each name held by several projects
 * the oldest keeps it (earliest `created_at`, then lowest id) and the others become `<name>-2`, `<name>-3`, …
 * in that order, within the 40 characters of a project name (the base is cut, without a trailing `-`/`_`),
 * skipping names already taken. Each rename is recorded for the owner as a `project_renamed` activity event
 * with the old and the new name. The per-owner constraint goes: the new index implies it.
 */
import { type Kysely, sql } from 'kysely';

/** Longest project name (projects.service `PROJECT_NAME_PATTERN`). */
const MAX_NAME = 40;

/**
 * The first free name `<base>-<n>` (n = 2, 3, …) of at most MAX_NAME characters.
 * @param taken every name in use; the chosen one is added to it.
 */
export function freeName(base: string, taken: Set<string>): string {
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    const stem = base.slice(0, MAX_NAME - suffix.length).replace(/[-_]+$/, '');
    const candidate = `${stem}${suffix}`;
    if (!taken.has(candidate)) {
      taken.add(candidate);
      return candidate;
    }
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  const rows = (
    await sql<{ id: number; owner_id: number; name: string }>`
      select id, owner_id, name from projects order by name, created_at, id
    `.execute(db)
  ).rows;
  const taken = new Set(rows.map((r) => r.name));
  const seen = new Set<string>();
  for (const r of rows) {
    if (!seen.has(r.name)) {
      seen.add(r.name); // the oldest project of this name keeps it
      continue;
    }
    const next = freeName(r.name, taken);
    await sql`update projects set name = ${next}, updated_at = now() where id = ${r.id}`.execute(db);
    await sql`
      insert into activity_log (user_id, actor, project_id, type, title, detail, payload)
      values (
        ${r.owner_id}, 'system', ${r.id}, 'project_renamed',
        ${`Project ${r.name} renamed to ${next}`},
        ${'Another project already had this name, and a project name now names one project across the service.'},
        ${JSON.stringify({ old_name: r.name, new_name: next, reason: 'duplicate_name' })}::jsonb
      )
    `.execute(db);
  }
  await sql`
    create unique index projects_name_unique on projects (name);
    alter table projects drop constraint if exists projects_owner_id_name_key;
  `.execute(db);
}
