/**
 * Issues of a project (docs/ARCHITECTURE.md, Issues, skills, wiki, files, pins, learnings).
 *
 * - Ids are numeric per project (`issue_counters` hands them out atomically).
 * - Every change writes an activity entry (`issue_activity`), sends a `knowledge.index` job for the issue
 *   in the same transaction, and records `issue_pick` / `issue_close` / `issue_log` activity-log events with
 *   `worker_id` set when the assignee or author names a worker of the project (by id or label).
 * - After every committed change the project's local issues file `.crm/issues.json` is rewritten (outside the
 *   transaction) so the CLI's commit-message hook can read it: `{version:1, project, generated_at,
 * issues:[{id,title,status,assignee}]}`.
 */
import path from 'node:path';
import type { Static } from 'typebox';
import type { Kysely, Transaction } from 'kysely';
import type { DB, IssuePriority, IssueStatus } from '../../db/types.ts';
import type { Actor } from '../../http/auth.ts';
import type { Access, ProjectRef } from '../../access/access.ts';
import type { ActivityLog } from '../../lib/activity.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { LoadedDocument, TextMark } from '../../lib/doc-sources.ts';
import { BadRequest, NotFound } from '../../http/errors.ts';
import { atomicWrite } from '../../lib/atomic-write.ts';
import { resolveInside } from '../../lib/paths.ts';
import type { WorkersRepo } from '../workers/workers.repo.ts';
import type { IssueChanges, IssuesRepo } from './issues.repo.ts';
import type * as S from './issues.schemas.ts';

export const ISSUES_FILE = path.join('.crm', 'issues.json');

/** An activity entry of an issue (issues.schemas.ts `Entry`). */
export type IssueEntry = Static<typeof S.Entry>;
/** An issue without its entries (issues.schemas.ts `IssueSummary`). */
export type IssueSummary = Static<typeof S.IssueSummary>;
/** An issue with its entries, oldest first (issues.schemas.ts `Issue`). */
export type Issue = Static<typeof S.Issue>;

type Executor = Kysely<DB> | Transaction<DB>;

export interface IssuesDeps {
  repo: IssuesRepo;
  /** The workers area: a project's workers, to name the worker an assignee or author refers to. */
  workers: Pick<WorkersRepo, 'refs'>;
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
 * @throws BadRequest `invalid_timestamp` for anything else (docs/ARCHITECTURE.md, Issues, skills, wiki, files, pins,
 * learnings).
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

/** The issues service (see the module comment); built once by services.ts. */
export function createIssuesService(deps: IssuesDeps) {
  const { repo } = deps;
  const chains = new Map<number, Promise<void>>();

  /** Rewrite `.crm/issues.json` of a project (serialized per project; failures are logged, never thrown). */
  function refreshIssuesFile(project: Pick<ProjectRef, 'id' | 'name' | 'dir'>): Promise<void> {
    const prev = chains.get(project.id) ?? Promise.resolve();
    const next = prev.then(async () => {
      try {
        const rows = await repo.fileRows(project.id);
        // Refused (and logged) when `.crm` or the file is a link leading outside the project directory.
        const { abs } = await resolveInside(project.dir, ISSUES_FILE, { create: true });
        const body = JSON.stringify({
          version: 1,
          project: project.name,
          generated_at: new Date().toISOString(),
          issues: rows,
        });
        await atomicWrite(abs, `${body}\n`);
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
  async function workerFor(ex: Executor, projectId: number, who: string | null | undefined): Promise<number | null> {
    if (!who) return null;
    const w = who.trim().replace(/^@/, '');
    const rows = await deps.workers.refs(projectId, ex);
    const hit = rows.find((r) => String(r.id) === w) ?? rows.find((r) => r.label.toLowerCase() === w.toLowerCase());
    return hit?.id ?? null;
  }

  /** An issue with its entries (read with `ex` inside a transaction). @throws NotFound `issue_not_found`. */
  async function load(projectId: number, id: number, ex?: Executor): Promise<Issue> {
    const row = await repo.find(projectId, id, ex);
    if (!row) throw new NotFound(`Issue #${id} was not found in this project.`, 'issue_not_found');
    const activity = await repo.entries(projectId, id, ex);
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
    return repo.addEntry(tx, { projectId, number: id, kind, author, message, ts });
  }

  type Patch = IssueChanges;

  async function applyUpdate(
    actor: Actor,
    project: ProjectRef,
    id: number,
    patch: Patch,
    author: string,
  ): Promise<Issue> {
    const issue = await repo.transaction(async (tx) => {
      const cur = await repo.lockForUpdate(tx, project.id, id);
      if (!cur) throw new NotFound(`Issue #${id} was not found in this project.`, 'issue_not_found');
      await repo.update(tx, project.id, id, {
        ...patch,
        labels: patch.labels !== undefined ? [...new Set(patch.labels)] : undefined,
      });
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
      return load(project.id, id, tx);
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
      const { rows, total } = await repo.list(
        project.id,
        {
          statuses: q.status ? (q.status.split(',') as IssueStatus[]) : undefined,
          assignee: q.assignee === undefined ? undefined : q.assignee === 'none' ? null : q.assignee,
        },
        { limit, offset },
      );
      return { issues: rows.map((r) => ({ ...r, labels: r.labels ?? [] })), total, limit, offset };
    },

    /**
     * Create an issue (status open, priority P2 by default).
     * @param author who is credited (`created_by` and the `create` entry): a worker's label when a worker
     *   creates it through its tools; by default the caller.
     * @param body.originKey the agent tool call creating it: the same call made again (a run resumed after a
     *   crash) answers the issue it created instead of creating another (docs/ARCHITECTURE.md, Crash recovery).
     * @returns the issue with its activity.
     */
    async create(
      actor: Actor,
      name: string,
      body: {
        title: string;
        description?: string;
        priority?: IssuePriority;
        assignee?: string | null;
        labels?: string[];
        originKey?: string;
      },
      author: string = actorName(actor),
    ): Promise<Issue> {
      const project = await deps.access.project(actor, name);
      if (body.originKey) {
        const made = await repo.byOriginKey(project.id, body.originKey);
        if (made !== undefined) return load(project.id, made);
      }
      const issue = await repo.transaction(async (tx) => {
        const id = await repo.nextNumber(tx, project.id);
        await repo.insert(tx, {
          projectId: project.id,
          number: id,
          title: body.title,
          description: body.description ?? '',
          priority: body.priority ?? 'P2',
          assignee: body.assignee ?? null,
          labels: [...new Set(body.labels ?? [])],
          createdBy: author,
          originKey: body.originKey ?? null,
        });
        await addEntry(tx, project.id, id, 'create', author, `created: ${body.title}`);
        await index(tx, project.id, id);
        return load(project.id, id, tx);
      });
      await refreshIssuesFile(project);
      return issue;
    },

    /** One issue with its activity entries (oldest first). @throws NotFound `issue_not_found`. */
    async get(actor: Actor, name: string, id: number): Promise<Issue> {
      const project = await deps.access.project(actor, name);
      return load(project.id, id);
    },

    /**
     * Update fields of an issue (web route). Setting `in_progress` with an assignee is "taking" it: logged
     * as `taken by …` and recorded as `issue_pick`; moving to closed records `issue_close`.
     * @param author who is credited in the entries and events: a worker's label when a worker acts through
     *   its tools (the events then carry its `worker_id`); by default the caller.
     */
    async update(
      actor: Actor,
      name: string,
      id: number,
      patch: Patch,
      author: string = actorName(actor),
    ): Promise<Issue> {
      const project = await deps.access.project(actor, name);
      return applyUpdate(actor, project, id, patch, author);
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
      const out = await repo.transaction(async (tx) => {
        const cur = await repo.lockForUpdate(tx, project.id, id);
        if (!cur) throw new NotFound(`Issue #${id} was not found in this project.`, 'issue_not_found');
        const entry = await addEntry(tx, project.id, id, 'log', author, body.message, ts);
        await repo.touch(tx, project.id, id);
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
        return { issue: await load(project.id, id, tx), entry };
      });
      await refreshIssuesFile(project);
      return out;
    },

    /** Document loader of the semantic index (`doc_type` issue, `doc_id` the issue number). */
    async loadDocument(projectId: number | null, docId: string): Promise<LoadedDocument | null> {
      if (projectId === null || !/^\d+$/.test(docId)) return null;
      try {
        const i = await load(projectId, Number(docId));
        const entries = i.activity.filter((e) => e.kind === 'log');
        let text = [
          `# #${i.id} ${i.title}`,
          `Status: ${i.status}; priority ${i.priority}; assignee ${i.assignee ?? 'none'}`,
          i.description,
        ]
          .filter(Boolean)
          .join('\n\n');
        // Each log entry is a line of its own, marked with its activity id, so a cited passage names its entries.
        const marks: TextMark[] = [];
        if (entries.length) {
          text += '\n\n## Log\n';
          for (const [n, e] of entries.entries()) {
            marks.push({ at: text.length, activity_id: e.id });
            text += `- ${e.author}: ${e.message.replace(/\n+/g, ' ')}${n < entries.length - 1 ? '\n' : ''}`;
          }
        }
        return { title: `#${i.id} ${i.title}`, text, scope: 'project', ...(marks.length ? { marks } : {}) };
      } catch (err) {
        if (err instanceof NotFound) return null;
        throw err;
      }
    },
  };
}

export type IssuesService = ReturnType<typeof createIssuesService>;
