/**
 * SQL of the issues area: `issues` (keyed by project and per-project number), `issue_counters` (the next
 * number of each project) and `issue_activity` (the entries of an issue). Other areas read issues through
 * the functions here (pins, the knowledge graph) or the issues service.
 */
import { type Kysely, sql, type Transaction, type Updateable } from 'kysely';
import type { DB, IssuePriority, IssueStatus } from '../../db/types.ts';
import { DELETED_ACTOR } from '../../db/privacy-sql.ts';

type Executor = Kysely<DB> | Transaction<DB>;

/** Columns of an issue as the API shows it (`number` as `id`). */
const SUMMARY = [
  'number as id',
  'title',
  'description',
  'status',
  'assignee',
  'priority',
  'labels',
  'created_by',
  'created_at',
  'updated_at',
] as const;

const ENTRY = ['id', 'kind', 'author', 'message', 'ts'] as const;

/** Fields an update may change (labels are stored as a JSON array). */
export interface IssueChanges {
  status?: IssueStatus;
  assignee?: string | null;
  title?: string;
  priority?: IssuePriority;
  description?: string;
  labels?: string[];
}

/** The issues area's queries over `db`; methods taking `tx`/`ex` run in the caller's transaction. */
export function createIssuesRepo(db: Kysely<DB>) {
  return {
    /** Run `fn` in one transaction. */
    transaction: <T>(fn: (tx: Transaction<DB>) => Promise<T>): Promise<T> => db.transaction().execute(fn),

    /** Hand out the project's next issue number (1, 2, …; atomic under concurrent creates). */
    async nextNumber(tx: Executor, projectId: number): Promise<number> {
      const r = await tx
        .insertInto('issue_counters')
        .values({ project_id: projectId, last_number: 1 })
        .onConflict((oc) => oc.column('project_id').doUpdateSet({ last_number: sql`issue_counters.last_number + 1` }))
        .returning('last_number')
        .executeTakeFirstOrThrow();
      return r.last_number;
    },

    /** Insert an issue (status open by default). */
    async insert(
      tx: Executor,
      i: {
        projectId: number;
        number: number;
        title: string;
        description: string;
        priority: IssuePriority;
        assignee: string | null;
        labels: string[];
        createdBy: string;
        originKey?: string | null;
      },
    ): Promise<void> {
      await tx
        .insertInto('issues')
        .values({
          project_id: i.projectId,
          number: i.number,
          title: i.title,
          description: i.description,
          priority: i.priority,
          assignee: i.assignee,
          labels: JSON.stringify(i.labels),
          created_by: i.createdBy,
          origin_key: i.originKey ?? null,
        })
        .execute();
    },

    /** The number of the issue created by tool call `originKey` in a project, or undefined. */
    async byOriginKey(projectId: number, originKey: string, ex: Executor = db): Promise<number | undefined> {
      const r = await ex
        .selectFrom('issues')
        .select('number')
        .where('project_id', '=', projectId)
        .where('origin_key', '=', originKey)
        .executeTakeFirst();
      return r?.number;
    },

    /** One issue's columns (`number` as `id`; `labels` may be null in old rows), or undefined. */
    find: (projectId: number, number: number, ex: Executor = db) =>
      ex
        .selectFrom('issues')
        .select(SUMMARY)
        .where('project_id', '=', projectId)
        .where('number', '=', number)
        .executeTakeFirst(),

    /** The entries of an issue, oldest first. */
    entries: (projectId: number, number: number, ex: Executor = db) =>
      ex
        .selectFrom('issue_activity')
        .select(ENTRY)
        .where('project_id', '=', projectId)
        .where('issue_number', '=', number)
        .orderBy('ts')
        .orderBy('id')
        .execute(),

    /** Lock an issue's row for the rest of the transaction. @returns its status, assignee and title, or undefined. */
    lockForUpdate: (tx: Transaction<DB>, projectId: number, number: number) =>
      tx
        .selectFrom('issues')
        .select(['status', 'assignee', 'title'])
        .where('project_id', '=', projectId)
        .where('number', '=', number)
        .forUpdate()
        .executeTakeFirst(),

    /** Apply the given (not undefined) `changes` and set `updated_at` to now; labels are stored as given. */
    async update(tx: Executor, projectId: number, number: number, changes: IssueChanges): Promise<void> {
      const set: Updateable<DB['issues']> = { updated_at: new Date() };
      for (const k of ['status', 'assignee', 'title', 'priority', 'description'] as const)
        if (changes[k] !== undefined) Object.assign(set, { [k]: changes[k] });
      if (changes.labels !== undefined) set.labels = JSON.stringify(changes.labels);
      await tx
        .updateTable('issues')
        .set(set)
        .where('project_id', '=', projectId)
        .where('number', '=', number)
        .execute();
    },

    /** Set `updated_at` to now (an entry was added). */
    async touch(tx: Executor, projectId: number, number: number): Promise<void> {
      await tx
        .updateTable('issues')
        .set({ updated_at: new Date() })
        .where('project_id', '=', projectId)
        .where('number', '=', number)
        .execute();
    },

    /** Append an entry (`ts` defaults to now). @returns `{id, kind, author, message, ts}`. */
    addEntry: (
      tx: Executor,
      e: { projectId: number; number: number; kind: string; author: string; message: string; ts?: Date },
    ) =>
      tx
        .insertInto('issue_activity')
        .values({
          project_id: e.projectId,
          issue_number: e.number,
          kind: e.kind,
          author: e.author,
          message: e.message,
          ...(e.ts ? { ts: e.ts } : {}),
        })
        .returning(ENTRY)
        .executeTakeFirstOrThrow(),

    /**
     * A page of a project's issues, newest first, and how many match.
     * @param filter.statuses any of these statuses; `assignee` exact, `null` for unassigned.
     */
    async list(
      projectId: number,
      filter: { statuses?: IssueStatus[]; assignee?: string | null },
      page: { limit: number; offset: number },
    ) {
      let base = db.selectFrom('issues').where('project_id', '=', projectId);
      if (filter.statuses) base = base.where('status', 'in', filter.statuses);
      if (filter.assignee !== undefined)
        base =
          filter.assignee === null ? base.where('assignee', 'is', null) : base.where('assignee', '=', filter.assignee);
      const [rows, count] = await Promise.all([
        base.select(SUMMARY).orderBy('number', 'desc').limit(page.limit).offset(page.offset).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { rows, total: Number(count.n) };
    },

    /** Every issue of a project as the local issues file lists it `{id, title, status, assignee}`, by number. */
    fileRows: (projectId: number) =>
      db
        .selectFrom('issues')
        .select(['number as id', 'title', 'status', 'assignee'])
        .where('project_id', '=', projectId)
        .orderBy('number')
        .execute(),

    /** Whether issue `number` exists in the project. */
    /** Whether any of these projects has an issue (the onboarding checklist's "issue" step). */
    async anyIn(projectIds: number[]): Promise<boolean> {
      if (!projectIds.length) return false;
      const row = await db
        .selectFrom('issues')
        .select('number')
        .where('project_id', 'in', projectIds)
        .limit(1)
        .executeTakeFirst();
      return !!row;
    },

    async exists(projectId: number, number: number): Promise<boolean> {
      const r = await db
        .selectFrom('issues')
        .select('number')
        .where('project_id', '=', projectId)
        .where('number', '=', number)
        .executeTakeFirst();
      return r !== undefined;
    },

    /** The newest `limit` issues of a project with their text and assignee (the knowledge graph). */
    forGraph: (projectId: number, limit: number) =>
      db
        .selectFrom('issues')
        .select(['number', 'title', 'description', 'assignee'])
        .where('project_id', '=', projectId)
        .orderBy('number', 'desc')
        .limit(limit)
        .execute(),

    // Personal data (privacy export and erasure, retention).

    /** The export's `issues` of a project with their entries (`activity`), by number, 200 issues at a time. */
    async *exportProject(projectId: number) {
      let after = 0;
      for (;;) {
        const rows = await db
          .selectFrom('issues')
          .select(SUMMARY)
          .where('project_id', '=', projectId)
          .where('number', '>', after)
          .orderBy('number')
          .limit(200)
          .execute();
        if (!rows.length) return;
        const entries = await db
          .selectFrom('issue_activity')
          .select(['issue_number', ...ENTRY])
          .where('project_id', '=', projectId)
          .where(
            'issue_number',
            'in',
            rows.map((r) => r.id),
          )
          .orderBy('id')
          .execute();
        const by = new Map<number, unknown[]>();
        for (const { issue_number, ...e } of entries) by.set(issue_number, [...(by.get(issue_number) ?? []), e]);
        for (const r of rows) yield { ...r, activity: by.get(r.id) ?? [] };
        if (rows.length < 200) return;
        after = rows[rows.length - 1].id;
      }
    },

    /** Erasure: a project's issue entries, issues and counter. */
    async eraseProject(tx: Transaction<DB>, projectId: number): Promise<void> {
      await tx.deleteFrom('issue_activity').where('project_id', '=', projectId).execute();
      await tx.deleteFrom('issues').where('project_id', '=', projectId).execute();
      await tx.deleteFrom('issue_counters').where('project_id', '=', projectId).execute();
    },

    /** Erasure: in other projects, issues and entries the user wrote or holds keep no name of theirs. */
    async eraseUser(tx: Transaction<DB>, names: string[]): Promise<void> {
      if (!names.length) return;
      await tx.updateTable('issue_activity').set({ author: DELETED_ACTOR }).where('author', 'in', names).execute();
      await tx.updateTable('issues').set({ created_by: DELETED_ACTOR }).where('created_by', 'in', names).execute();
      await tx.updateTable('issues').set({ assignee: DELETED_ACTOR }).where('assignee', 'in', names).execute();
    },
  };
}

export type IssuesRepo = ReturnType<typeof createIssuesRepo>;
