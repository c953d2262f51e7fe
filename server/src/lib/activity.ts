/**
 * The activity log (specification, Events): one row per event with its type, optional project and
 * worker, a short title/detail for feeds and a JSON payload.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/types.ts';

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

export interface ActivityLog {
  /** Write one event; pass `tx` inside a transaction. */
  record(ev: ActivityEvent, tx?: Transaction<DB>): Promise<void>;
  /** Write one event and swallow any failure (best-effort telemetry). */
  recordBestEffort(ev: ActivityEvent): Promise<void>;
}

export function createActivityLog(db: Kysely<DB>, log?: { warn: (o: object, m: string) => void }): ActivityLog {
  const record = async (ev: ActivityEvent, tx?: Transaction<DB>) => {
    await (tx ?? db)
      .insertInto('activity_log')
      .values({
        type: ev.type,
        user_id: ev.userId ?? null,
        actor: ev.actor ?? null,
        project_id: ev.projectId ?? null,
        worker_id: ev.workerId ?? null,
        title: ev.title ?? null,
        detail: ev.detail ?? null,
        payload: JSON.stringify(ev.payload ?? {}),
      })
      .execute();
  };
  return {
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
