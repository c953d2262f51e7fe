/**
 * SQL of the platform area: `platform_audit`, the append-only record of every change, test and restart of a
 * platform secret (the database refuses UPDATE and DELETE on it). Values are never stored here.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';

export type Executor = Kysely<DB> | Transaction<DB>;

/** One audit entry to append. */
export interface AuditInput {
  keyName: string;
  action: 'set' | 'test' | 'restart' | 'delete';
  ok: boolean | null;
  clientIp: string | null;
  userAgent: string | null;
  actorEmail: string | null;
}

export function createPlatformRepo(db: Kysely<DB>) {
  return {
    /** Run `fn` in one transaction; pass `tx` to every call inside it. */
    transaction: <T>(fn: (tx: Transaction<DB>) => Promise<T>): Promise<T> => db.transaction().execute(fn),

    /** Append one entry. */
    async appendAudit(e: AuditInput, ex: Executor = db): Promise<void> {
      await ex
        .insertInto('platform_audit')
        .values({
          key_name: e.keyName,
          action: e.action,
          ok: e.ok,
          client_ip: e.clientIp?.slice(0, 100) ?? null,
          user_agent: e.userAgent?.slice(0, 500) ?? null,
          actor_email: e.actorEmail,
        })
        .execute();
    },

    /** The newest `limit` entries, optionally of one key, newest first. */
    listAudit(limit: number, key?: string) {
      let q = db
        .selectFrom('platform_audit')
        .select(['id', 'key_name', 'action', 'ok', 'client_ip', 'user_agent', 'actor_email', 'created_at'])
        .orderBy('id', 'desc')
        .limit(limit);
      if (key) q = q.where('key_name', '=', key);
      return q.execute();
    },

    /** Entries made by one admin (privacy export). */
    auditBy: (email: string) =>
      db
        .selectFrom('platform_audit')
        .select(['key_name', 'action', 'ok', 'created_at'])
        .where('actor_email', '=', email)
        .orderBy('id')
        .execute(),
  };
}

export type PlatformRepo = ReturnType<typeof createPlatformRepo>;
