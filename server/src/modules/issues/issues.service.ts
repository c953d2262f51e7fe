/**
 * Issues of a project (specification: Issue, Issue status, Issue updates for workers; CONTRACT.md §1, §6).
 *
 * - Ids are numeric per project (`issue_counters` hands them out atomically).
 * - Every change writes an activity entry (`issue_activity`), sends a `knowledge.index` job for the issue
 *   in the same transaction, and records `issue_pick` / `issue_close` / `issue_log` activity-log events with
 *   `worker_id` set when the assignee or author names a worker of the project (by id or label).
 * - After every committed change the project's local issues file `.crm/issues.json` is rewritten (outside the
 *   transaction) so the CLI's commit-message hook can read it: `{version:1, project, generated_at, issues:[{id,title,status,assignee}]}`.
 */
import path from 'node:path';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB, IssuePriority, IssueStatus } from '../../db/types.ts';
import type { Actor } from '../../http/auth.ts';
import type { Access, ProjectRef } from '../../access/access.ts';
import type { ActivityLog } from '../../lib/activity.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { LoadedDocument } from '../../lib/doc-sources.ts';
import { BadRequest, NotFound } from '../../http/errors.ts';
import { atomicWrite } from '../../lib/atomic-write.ts';

export const ISSUES_FILE = path.join('.crm', 'issues.json');

export interface IssueEntry {
  id: number;
  kind: string;
  author: string;
  message: string;
  ts: Date;
}
export interface IssueSummary {
  id: number;
  title: string;
  description: string;
  status: IssueStatus;
  assignee: string | null;
  priority: IssuePriority;
  labels: string[];
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}
export interface Issue extends IssueSummary {
  activity: IssueEntry[];
}

export interface IssuesDeps {
  db: Kysely<DB>;
  access: Access;
  activity: ActivityLog;
  jobs: JobQueue;
  log: { warn: (o: object, m: string) => void };
}

/** The display name of an actor in activity entries. */
export const actorName = (actor: Actor) => actor.name || actor.email || `user ${actor.id}`;

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * Parse an activity timestamp (ISO-8601 date or date-time). Future values are clamped to `now`.
 * @throws BadRequest `invalid_timestamp` for anything else (specification, Issue updates for workers).
 */
export function parseLogTs(ts: string | undefined, now = new Date()): Date {
  if (ts === undefined) return now;
  const m = ISO.exec(ts.trim());
  const fail = () =>
    new BadRequest('invalid_timestamp', 'ts must be an ISO-8601 date-time, e.g. 2026-01-31T12:00:00Z.', {
      field: 'ts',
    });
  if (!m) throw fail();
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const day = new Date(Date.UTC(y, mo - 1, d));
  if (day.getUTCFullYear() !== y || day.getUTCMonth() !== mo - 1 || day.getUTCDate() !== d) throw fail();
  if (m[4] !== undefined && (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6] ?? 0) > 59)) throw fail();
  const t = Date.parse(ts.trim().replace(' ', 'T'));
  if (Number.isNaN(t)) throw fail();
  return t > now.getTime() ? now : new Date(t);
}

type Exec = Kysely<DB> | Transaction<DB>;

export function createIssuesService(deps: IssuesDeps) {
  const { db } = deps;
  const chains = new Map<number, Promise<void>>();

  /** Rewrite `.crm/issues.json` of a project (serialized per project; failures are logged, never thrown). */
  function refreshIssuesFile(project: Pick<ProjectRef, 'id' | 'name' | 'dir'>): Promise<void> {
    const prev = chains.get(project.id) ?? Promise.resolve();
    const next = prev.then(async () => {
      try {
        const rows = await db
          .selectFrom('issues')
          .select(['number as id', 'title', 'status', 'assignee'])
          .where('project_id', '=', project.id)
          .orderBy('number')
          .execute();
        const body = JSON.stringify({
          version: 1,
          project: project.name,
          generated_at: new Date().toISOString(),
          issues: rows,
        });
        await atomicWrite(path.join(project.dir, ISSUES_FILE), `${body}\n`);
      } catch (err) {
        deps.log.warn({ err: (err as Error).message, project: project.id }, 'issues file not written');
      }
    });
    chains.set(project.id, next);
    void next.finally(() => {
      if (chains.get(project.id) === next) chains.delete(project.id);
    });
    return next;
  }

  /** The worker of the project named by `who` (its id as a string, or its label, case-insensitive). */
  async function workerFor(ex: Exec, projectId: number, who: string | null | undefined): Promise<number | null> {
    if (!who) return null;
    const w = who.trim().replace(/^@/, '');
    const rows = await ex.selectFrom('workers').select(['id', 'label']).where('project_id', '=', projectId).execute();
    const hit = rows.find((r) => String(r.id) === w) ?? rows.find((r) => r.label.toLowerCase() === w.toLowerCase());
    return hit?.id ?? null;
  }

  async function load(ex: Exec, projectId: number, id: number): Promise<Issue> {
    const row = await ex
      .selectFrom('issues')
      .select([
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
      ])
      .where('project_id', '=', projectId)
      .where('number', '=', id)
      .executeTakeFirst();
    if (!row) throw new NotFound(`Issue #${id} was not found in this project.`, 'issue_not_found');
    const activity = await ex
      .selectFrom('issue_activity')
      .select(['id', 'kind', 'author', 'message', 'ts'])
      .where('project_id', '=', projectId)
      .where('issue_number', '=', id)
      .orderBy('ts')
      .orderBy('id')
      .execute();
    return { ...row, labels: row.labels ?? [], activity };
  }

  const index = (tx: Transaction<DB>, projectId: number, id: number) =>
    deps.jobs.send('knowledge.index', { project_id: projectId, doc_type: 'issue', doc_id: String(id) }, { tx });

  async function addEntry(
    tx: Transaction<DB>,
    projectId: number,
    id: number,
    kind: string,
    author: string,
    message: string,
    ts?: Date,
  ): Promise<IssueEntry> {
    return tx
      .insertInto('issue_activity')
      .values({ project_id: projectId, issue_number: id, kind, author, message, ...(ts ? { ts } : {}) })
      .returning(['id', 'kind', 'author', 'message', 'ts'])
      .executeTakeFirstOrThrow();
  }

  interface Patch {
    status?: IssueStatus;
    assignee?: string | null;
    title?: string;
    priority?: IssuePriority;
    description?: string;
    labels?: string[];
  }

  async function applyUpdate(
    actor: Actor,
    project: ProjectRef,
    id: number,
    patch: Patch,
    author: string,
  ): Promise<Issue> {
    const issue = await db.transaction().execute(async (tx) => {
      const cur = await tx
        .selectFrom('issues')
        .select(['status', 'assignee', 'title'])
        .where('project_id', '=', project.id)
        .where('number', '=', id)
        .forUpdate()
        .executeTakeFirst();
      if (!cur) throw new NotFound(`Issue #${id} was not found in this project.`, 'issue_not_found');
      const set: Record<string, unknown> = { updated_at: new Date() };
      for (const k of ['status', 'assignee', 'title', 'priority', 'description'] as const)
        if (patch[k] !== undefined) set[k] = patch[k];
      if (patch.labels !== undefined) set.labels = JSON.stringify([...new Set(patch.labels)]);
      await tx.updateTable('issues').set(set).where('project_id', '=', project.id).where('number', '=', id).execute();
      const status = patch.status ?? cur.status;
      const assignee = patch.assignee !== undefined ? patch.assignee : cur.assignee;
      const statusChanged = status !== cur.status;
      const assigneeChanged = assignee !== cur.assignee;
      const taken = status === 'in_progress' && !!assignee && (statusChanged || assigneeChanged);
      if (taken) {
        await addEntry(tx, project.id, id, 'take', author, `taken by ${assignee}`);
        await deps.activity.record(
          {
            type: 'issue_pick',
            userId: actor.id,
            actor: author,
            projectId: project.id,
            workerId: (await workerFor(tx, project.id, assignee)) ?? (await workerFor(tx, project.id, author)),
            title: `Picked #${id}: ${cur.title}`,
            payload: { issue_id: id, assignee },
          },
          tx,
        );
      } else {
        if (statusChanged) await addEntry(tx, project.id, id, 'status', author, `status ${cur.status} → ${status}`);
        if (assigneeChanged)
          await addEntry(tx, project.id, id, 'assign', author, assignee ? `assigned to ${assignee}` : 'unassigned');
      }
      if (statusChanged && status === 'closed') {
        await deps.activity.record(
          {
            type: 'issue_close',
            userId: actor.id,
            actor: author,
            projectId: project.id,
            workerId: (await workerFor(tx, project.id, author)) ?? (await workerFor(tx, project.id, assignee)),
            title: `Closed #${id}: ${patch.title ?? cur.title}`,
            payload: { issue_id: id },
          },
          tx,
        );
      }
      const edited = (['title', 'priority', 'description', 'labels'] as const).filter((k) => patch[k] !== undefined);
      if (edited.length) await addEntry(tx, project.id, id, 'edit', author, `edited ${edited.join(', ')}`);
      await index(tx, project.id, id);
      return load(tx, project.id, id);
    });
    await refreshIssuesFile(project);
    return issue;
  }

  return {
    refreshIssuesFile,

    /**
     * List a project's issues, newest first. `status` is one status or a comma list; `assignee` an exact
     * name (`none`: unassigned). @returns `{issues, total, limit, offset}` (summaries without activity).
     */
    async list(actor: Actor, name: string, q: { status?: string; assignee?: string; limit?: number; offset?: number }) {
      const project = await deps.access.project(actor, name);
      const limit = q.limit ?? 50;
      const offset = q.offset ?? 0;
      let base = db.selectFrom('issues').where('project_id', '=', project.id);
      if (q.status) base = base.where('status', 'in', q.status.split(',') as IssueStatus[]);
      if (q.assignee !== undefined)
        base = q.assignee === 'none' ? base.where('assignee', 'is', null) : base.where('assignee', '=', q.assignee);
      const [rows, count] = await Promise.all([
        base
          .select([
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
          ])
          .orderBy('number', 'desc')
          .limit(limit)
          .offset(offset)
          .execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { issues: rows.map((r) => ({ ...r, labels: r.labels ?? [] })), total: Number(count.n), limit, offset };
    },

    /** Create an issue (status open, priority P2 by default). @returns the issue with its activity. */
    async create(
      actor: Actor,
      name: string,
      body: {
        title: string;
        description?: string;
        priority?: IssuePriority;
        assignee?: string | null;
        labels?: string[];
      },
    ): Promise<Issue> {
      const project = await deps.access.project(actor, name);
      const author = actorName(actor);
      const issue = await db.transaction().execute(async (tx) => {
        const { last_number: id } = await tx
          .insertInto('issue_counters')
          .values({ project_id: project.id, last_number: 1 })
          .onConflict((oc) => oc.column('project_id').doUpdateSet({ last_number: sql`issue_counters.last_number + 1` }))
          .returning('last_number')
          .executeTakeFirstOrThrow();
        await tx
          .insertInto('issues')
          .values({
            project_id: project.id,
            number: id,
            title: body.title,
            description: body.description ?? '',
            priority: body.priority ?? 'P2',
            assignee: body.assignee ?? null,
            labels: JSON.stringify([...new Set(body.labels ?? [])]),
            created_by: author,
          })
          .execute();
        await addEntry(tx, project.id, id, 'create', author, `created: ${body.title}`);
        await index(tx, project.id, id);
        return load(tx, project.id, id);
      });
      await refreshIssuesFile(project);
      return issue;
    },

    /** One issue with its activity entries (oldest first). @throws NotFound `issue_not_found`. */
    async get(actor: Actor, name: string, id: number): Promise<Issue> {
      const project = await deps.access.project(actor, name);
      return load(db, project.id, id);
    },

    /**
     * Update fields of an issue (web route). Setting `in_progress` with an assignee is "taking" it: logged
     * as `taken by …` and recorded as `issue_pick`; moving to closed records `issue_close`.
     */
    async update(actor: Actor, name: string, id: number, patch: Patch): Promise<Issue> {
      const project = await deps.access.project(actor, name);
      return applyUpdate(actor, project, id, patch, actorName(actor));
    },

    /** Workers' route: status (the five values) and assignee; `author` names who acted (default: the caller). */
    async mcpUpdate(
      actor: Actor,
      projectName: string,
      id: number,
      body: { status?: IssueStatus; assignee?: string | null; author?: string },
    ): Promise<Issue> {
      const project = await deps.access.project(actor, projectName);
      return applyUpdate(
        actor,
        project,
        id,
        { status: body.status, assignee: body.assignee },
        body.author ?? actorName(actor),
      );
    },

    /**
     * Append a log entry. `ts` (ISO-8601) defaults to now; future values are clamped to now.
     * @throws BadRequest `invalid_timestamp`; NotFound `issue_not_found`. @returns the issue and the new entry.
     */
    async log(
      actor: Actor,
      name: string,
      id: number,
      body: { message: string; author?: string; ts?: string },
    ): Promise<{ issue: Issue; entry: IssueEntry }> {
      const ts = parseLogTs(body.ts);
      const project = await deps.access.project(actor, name);
      const author = body.author ?? actorName(actor);
      const out = await db.transaction().execute(async (tx) => {
        const cur = await tx
          .selectFrom('issues')
          .select(['title'])
          .where('project_id', '=', project.id)
          .where('number', '=', id)
          .forUpdate()
          .executeTakeFirst();
        if (!cur) throw new NotFound(`Issue #${id} was not found in this project.`, 'issue_not_found');
        const entry = await addEntry(tx, project.id, id, 'log', author, body.message, ts);
        await tx
          .updateTable('issues')
          .set({ updated_at: new Date() })
          .where('project_id', '=', project.id)
          .where('number', '=', id)
          .execute();
        await deps.activity.record(
          {
            type: 'issue_log',
            userId: actor.id,
            actor: author,
            projectId: project.id,
            workerId: await workerFor(tx, project.id, author),
            title: `Log on #${id}: ${cur.title}`,
            detail: body.message.slice(0, 500),
            payload: { issue_id: id, entry_id: entry.id },
          },
          tx,
        );
        await index(tx, project.id, id);
        return { issue: await load(tx, project.id, id), entry };
      });
      await refreshIssuesFile(project);
      return out;
    },

    /** Document loader of the semantic index (`doc_type` issue, `doc_id` the issue number). */
    async loadDocument(projectId: number | null, docId: string): Promise<LoadedDocument | null> {
      if (projectId === null || !/^\d+$/.test(docId)) return null;
      try {
        const i = await load(db, projectId, Number(docId));
        const log = i.activity.filter((e) => e.kind === 'log').map((e) => `- ${e.author}: ${e.message}`);
        const text = [
          `# #${i.id} ${i.title}`,
          `Status: ${i.status}; priority ${i.priority}; assignee ${i.assignee ?? 'none'}`,
          i.description,
          log.length ? `## Log\n${log.join('\n')}` : '',
        ]
          .filter(Boolean)
          .join('\n\n');
        return { title: `#${i.id} ${i.title}`, text, scope: 'project' };
      } catch (err) {
        if (err instanceof NotFound) return null;
        throw err;
      }
    },
  };
}

export type IssuesService = ReturnType<typeof createIssuesService>;
