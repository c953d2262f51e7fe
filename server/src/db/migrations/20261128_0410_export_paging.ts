/**
 * Indexes for the data export's keyset pages (issue 31): each page of a section is an ordered scan of
 * `(<owner>, id)` from the last id read (db/privacy-sql.ts `pagedById`). Messages and help messages had theirs;
 * the activity log (by project), token usage and auth events (by user) were indexed by time only, so a page had to
 * read and sort every remaining row of its owner.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create index activity_log_project_id on activity_log (project_id, id);
    create index token_usage_user_id on token_usage (user_id, id);
    create index auth_events_user_id on auth_events (user_id, id);
  `.execute(db);
}
