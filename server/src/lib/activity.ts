/**
 * The activity log: one row per event with its type, optional project and
 * worker, a short title/detail for feeds and a JSON payload.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../db/types.ts';
import { DELETED_ACTOR, pagedById, purgeOlderThan } from '../db/privacy-sql.ts';
import { precompiled } from '../db/precompiled.ts';

export interface ActivityEvent {
  type: string;
  userId?: number | null;
  /** Display name of who acted (e-mail, worker label, 'system'). */
  actor?: string | null;
  projectId?: number | null;
  workerId?: number | null;
  title?: string | null;
  detail?: string | null;
  payload?: Record<string, unknown>;
}

/** One stored event, as feeds and logs read it. */
export interface StoredEvent {
  id: number;
  type: string;
  actor: string | null;
  title: string | null;
  detail: string | null;
  worker_id: number | null;
  payload: Record<string, unknown>;
  created_at: Date;
}

/** Which events to read: a project's (optionally one worker's), of given types or type prefixes. */
export interface EventFilter {
  projectId: number;
  workerId?: number;
  /** Exact types. */
  types?: string[];
  /** Type prefixes (`issue_` matches issue_pick, issue_close, …); combined with `types` by OR. */
  prefixes?: string[];
}

export interface ActivityLog {
  /** Write one event; pass `tx` inside a transaction. */
  record(ev: ActivityEvent, tx?: Transaction<DB>): Promise<void>;
  /** Write one event and swallow any failure (best-effort telemetry). */
  recordBestEffort(ev: ActivityEvent): Promise<void>;
  /** The newest `limit` events matching `filter`, newest first. */
  list(filter: EventFilter, limit: number): Promise<StoredEvent[]>;
  /** Events of a project per UTC day (`YYYY-MM-DD`) and type in `[since, end)`. */
  countByDay(projectId: number, since: Date, end: Date): Promise<Array<{ day: string; type: string; n: number }>>;
  /** Events of `types` since a time, counted by type and by the payload field `key` (e.g. `class`). */
  countByPayload(
    types: string[],
    key: string,
    since: Date,
  ): Promise<Array<{ type: string; value: string | null; n: number }>>;
}

/** One event (every run writes two or more), compiled once (db/precompiled.ts). */
const INSERT_EVENT = precompiled(
  `insert into activity_log (type, user_id, actor, project_id, worker_id, title, detail, payload)
   values ($1, $2, $3, $4, $5, $6, $7, $8)`,
);

export function createActivityLog(db: Kysely<DB>, log?: { warn: (o: object, m: string) => void }): ActivityLog {
  const record = async (ev: ActivityEvent, tx?: Transaction<DB>) => {
    await INSERT_EVENT(tx ?? db, [
      ev.type,
      ev.userId ?? null,
      ev.actor ?? null,
      ev.projectId ?? null,
      ev.workerId ?? null,
      ev.title ?? null,
      ev.detail ?? null,
      JSON.stringify(ev.payload ?? {}),
    ]);
  };
  return {
    async list(filter, limit) {
      let q = db
        .selectFrom('activity_log')
        .select(['id', 'type', 'actor', 'title', 'detail', 'worker_id', 'payload', 'created_at'])
        .where('project_id', '=', filter.projectId);
      if (filter.workerId !== undefined) q = q.where('worker_id', '=', filter.workerId);
      const types = filter.types ?? [];
      const prefixes = filter.prefixes ?? [];
      if (types.length || prefixes.length)
        q = q.where((eb) =>
          eb.or([
            ...(types.length ? [eb('type', 'in', types)] : []),
            ...prefixes.map((p) => eb('type', 'like', `${p.replace(/[\\%_]/g, '\\$&')}%`)),
          ]),
        );
      return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    },
    async countByDay(projectId, since, end) {
      const day = sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD')`;
      const rows = await db
        .selectFrom('activity_log')
        .select([day.as('day'), 'type', sql<number>`count(*)::int`.as('n')])
        .where('project_id', '=', projectId)
        .where('created_at', '>=', since)
        .where('created_at', '<', end)
        .groupBy([day, 'type'])
        .execute();
      return rows.map((r) => ({ day: r.day, type: r.type, n: Number(r.n) }));
    },
    async countByPayload(types, key, since) {
      if (!types.length) return [];
      // The key as a literal, not a parameter: the grouped expression must be the selected one, and two
      // parameters ($1, $2) would make them differ.
      const value = sql<string | null>`payload->>${sql.lit(key)}`;
      const rows = await db
        .selectFrom('activity_log')
        .select(['type', value.as('value'), sql<number>`count(*)::int`.as('n')])
        .where('type', 'in', types)
        .where('created_at', '>=', since)
        .groupBy(['type', value])
        .execute();
      return rows.map((r) => ({ type: r.type, value: r.value, n: Number(r.n) }));
    },
    record,
    async recordBestEffort(ev) {
      try {
        await record(ev);
      } catch (err) {
        log?.warn({ err: (err as Error).message, type: ev.type }, 'activity event not written');
      }
    },
  };
}

/**
 * The activity log's part of personal data and retention (the privacy area calls it through the registry):
 * a project's events for the export, their erasure, the erased actor's name on events kept elsewhere, and the
 * daily purge.
 */
export function createActivityPrivacy(db: Kysely<DB>) {
  return {
    /** The export's `activity` of a project, oldest first, read 500 at a time. */
    exportProject: (projectId: number) =>
      pagedById(db, (ex, after, page) =>
        ex
          .selectFrom('activity_log')
          .select(['id', 'type', 'actor', 'worker_id', 'title', 'detail', 'payload', 'created_at'])
          .where('project_id', '=', projectId)
          .where('id', '>', after)
          .orderBy('id')
          .limit(page)
          .execute(),
      ),
    /** Erasure: a project's events. */
    async eraseProject(tx: Transaction<DB>, projectId: number): Promise<void> {
      await tx.deleteFrom('activity_log').where('project_id', '=', projectId).execute();
    },
    /**
     * Erasure: the user's events outside any project go; events of other projects stay with the actor
     * `[deleted]` and no user id.
     */
    async eraseUser(tx: Transaction<DB>, userId: number, names: string[]): Promise<void> {
      await tx.deleteFrom('activity_log').where('user_id', '=', userId).where('project_id', 'is', null).execute();
      await tx
        .updateTable('activity_log')
        .set({ actor: DELETED_ACTOR, user_id: null })
        .where((eb) => eb.or([eb('user_id', '=', userId), ...(names.length ? [eb('actor', 'in', names)] : [])]))
        .execute();
    },
    /** Retention: delete events older than `before`, in batches. @returns rows deleted. */
    purge: (before: Date) => purgeOlderThan(db, 'activity_log', 'created_at', before),
  };
}

export type ActivityPrivacy = ReturnType<typeof createActivityPrivacy>;
