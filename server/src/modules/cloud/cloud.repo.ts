/**
 * SQL of the cloud area: `cloud_containers` (one row per user's container), `cloud_waitlist`,
 * `cloud_log_lines` (the containers' output, so any instance serves the log stream) and `cloud_leases`
 * (periodic sweeps that run once across instances).
 */
import { type Kysely, type Selectable, type Transaction, sql } from 'kysely';
import type { CloudTables, DB } from '../../db/types.ts';

export type ContainerRow = Selectable<CloudTables['cloud_containers']>;
export type ContainerStatus = ContainerRow['status'];
export type WaitlistStatus = 'waiting' | 'invited' | 'activated';

/** A waitlist entry with its position (1-based, by order of joining). */
export interface WaitlistEntry {
  user_id: number;
  position: number;
  status: WaitlistStatus;
  note: string | null;
  joined_at: Date;
  invited_at: Date | null;
  activated_at: Date | null;
}

/** How long a `provisioning` row may stay before another attempt may take it over (a crash mid-create). */
const STALE_PROVISIONING = sql`interval '5 minutes'`;

export function createCloudRepo(db: Kysely<DB>) {
  const waitlistQuery = () =>
    db
      .selectFrom('cloud_waitlist as w')
      .select([
        'w.user_id',
        sql<number>`(select count(*)::int from cloud_waitlist x where x.id <= w.id)`.as('position'),
        'w.status',
        'w.note',
        'w.joined_at',
        'w.invited_at',
        'w.activated_at',
      ]);

  return {
    // Containers.

    /** User `userId`'s container row (any status, `deleted` included), or undefined. */
    container: (userId: number): Promise<ContainerRow | undefined> =>
      db.selectFrom('cloud_containers').selectAll().where('user_id', '=', userId).executeTakeFirst(),

    /**
     * Start provisioning for `userId`: a new row, or take over a `deleted` row (or a stale `provisioning`
     * one). One atomic statement, so of two concurrent calls one wins.
     * @returns true when this call owns the provisioning; false when a live container (or a fresh attempt) exists.
     */
    async beginProvisioning(userId: number, runtime: string): Promise<boolean> {
      const r = await sql<{ user_id: number }>`
        insert into cloud_containers (user_id, container_id, runtime, status)
        values (${userId}, '', ${runtime}, 'provisioning')
        on conflict (user_id) do update
          set container_id = '', runtime = excluded.runtime, status = 'provisioning', server_ip = null, port = null,
              internal_port = null, agent_authed = false, codehost_authed = false, last_active = now(),
              created_at = now(), updated_at = now()
          where cloud_containers.status = 'deleted'
             or (cloud_containers.status = 'provisioning' and cloud_containers.updated_at < now() - ${STALE_PROVISIONING})
        returning user_id`.execute(db);
      return r.rows.length > 0;
    },

    /** The runtime created the container: store its id and address, status ready. */
    async markReady(
      userId: number,
      c: { containerId: string; serverIp: string; port: number | null; internalPort: number | null },
    ): Promise<ContainerRow> {
      return db
        .updateTable('cloud_containers')
        .set({
          container_id: c.containerId,
          server_ip: c.serverIp,
          port: c.port,
          internal_port: c.internalPort,
          status: 'ready',
          last_active: sql<Date>`now()`,
          updated_at: sql<Date>`now()`,
        })
        .where('user_id', '=', userId)
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    /** Provisioning failed: forget the attempt. */
    async dropProvisioning(userId: number): Promise<void> {
      await db
        .deleteFrom('cloud_containers')
        .where('user_id', '=', userId)
        .where('status', '=', 'provisioning')
        .execute();
    },

    /** Move the container from one of `from` to `to`. @returns the row when it moved, else undefined. */
    setStatus: (userId: number, from: ContainerStatus[], to: ContainerStatus): Promise<ContainerRow | undefined> =>
      db
        .updateTable('cloud_containers')
        .set({
          status: to,
          updated_at: sql<Date>`now()`,
          ...(to === 'ready' ? { last_active: sql<Date>`now()` } : {}),
        })
        .where('user_id', '=', userId)
        .where('status', 'in', from)
        .returningAll()
        .executeTakeFirst(),

    /** Refresh `last_active` (not of a deleted container). @returns the row, or undefined. */
    touch: (userId: number): Promise<ContainerRow | undefined> =>
      db
        .updateTable('cloud_containers')
        .set({ last_active: sql<Date>`now()` })
        .where('user_id', '=', userId)
        .where('status', '!=', 'deleted')
        .returningAll()
        .executeTakeFirst(),

    /**
     * Claim every ready container idle for `idleSeconds` or more and mark it paused (atomic: each is claimed by
     * one caller). @returns the claimed rows.
     */
    claimIdle: (idleSeconds: number): Promise<Pick<ContainerRow, 'user_id' | 'container_id'>[]> =>
      db
        .updateTable('cloud_containers')
        .set({ status: 'paused', updated_at: sql<Date>`now()` })
        .where('status', '=', 'ready')
        .where('last_active', '<', sql<Date>`now() - make_interval(secs => ${idleSeconds})`)
        .returning(['user_id', 'container_id'])
        .execute(),

    /** The users whose container is ready (running). */
    readyUsers: async (): Promise<number[]> =>
      (await db.selectFrom('cloud_containers').select('user_id').where('status', '=', 'ready').execute()).map(
        (r) => r.user_id,
      ),

    /** Set `agent_authed` or `codehost_authed` to true. */
    async setFlag(userId: number, flag: 'agent_authed' | 'codehost_authed'): Promise<void> {
      await db
        .updateTable('cloud_containers')
        .set({ [flag]: true, updated_at: sql<Date>`now()` })
        .where('user_id', '=', userId)
        .execute();
    },

    /** Store the SSH key pair unless one is stored. @returns the public key kept (the existing one, if any). */
    async keepSshKey(userId: number, publicKey: string, privateSealed: string): Promise<string | undefined> {
      await db
        .updateTable('cloud_containers')
        .set({ ssh_public_key: publicKey, ssh_private_enc: privateSealed, updated_at: sql<Date>`now()` })
        .where('user_id', '=', userId)
        .where('ssh_public_key', 'is', null)
        .execute();
      const r = await db
        .selectFrom('cloud_containers')
        .select('ssh_public_key')
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return r?.ssh_public_key ?? undefined;
    },

    /** Containers per status (deleted ones excluded). */
    async countByStatus(): Promise<Record<string, number>> {
      const rows = await db
        .selectFrom('cloud_containers')
        .select(['status', sql<number>`count(*)::int`.as('n')])
        .where('status', '!=', 'deleted')
        .groupBy('status')
        .execute();
      return Object.fromEntries(rows.map((r) => [r.status, r.n]));
    },

    // Waitlist.

    /** Add the user (status waiting) unless present. @returns whether a row was added. */
    async joinWaitlist(userId: number, note: string | null): Promise<boolean> {
      const r = await db
        .insertInto('cloud_waitlist')
        .values({ user_id: userId, note })
        .onConflict((oc) => oc.column('user_id').doNothing())
        .returning('id')
        .executeTakeFirst();
      return !!r;
    },

    /** The user's waitlist entry, or undefined. */
    waitlistEntry: (userId: number): Promise<WaitlistEntry | undefined> =>
      waitlistQuery().where('w.user_id', '=', userId).executeTakeFirst() as Promise<WaitlistEntry | undefined>,

    /** Every entry in order of joining (at most `limit`). */
    listWaitlist: (limit: number): Promise<WaitlistEntry[]> =>
      waitlistQuery().orderBy('w.id').limit(limit).execute() as Promise<WaitlistEntry[]>,

    /** Entries per status and in total. */
    async waitlistStats(): Promise<{ total: number; waiting: number; invited: number; activated: number }> {
      const rows = await db
        .selectFrom('cloud_waitlist')
        .select(['status', sql<number>`count(*)::int`.as('n')])
        .groupBy('status')
        .execute();
      const by = Object.fromEntries(rows.map((r) => [r.status, r.n])) as Record<string, number>;
      const waiting = by.waiting ?? 0;
      const invited = by.invited ?? 0;
      const activated = by.activated ?? 0;
      return { total: waiting + invited + activated, waiting, invited, activated };
    },

    /** Mark the user's entry invited (from waiting; an entry is created when the user had none). */
    async inviteFromWaitlist(userId: number): Promise<void> {
      await sql`
        insert into cloud_waitlist (user_id, status, invited_at) values (${userId}, 'invited', now())
        on conflict (user_id) do update set status = 'invited', invited_at = now()
          where cloud_waitlist.status = 'waiting'`.execute(db);
    },

    /** The user's entry becomes activated (first container). */
    async activateWaitlist(userId: number): Promise<void> {
      await db
        .updateTable('cloud_waitlist')
        .set({ status: 'activated', activated_at: sql<Date>`now()` })
        .where('user_id', '=', userId)
        .where('status', '!=', 'activated')
        .execute();
    },

    // Log lines.

    /** Append output lines of user `userId`'s container. @returns the stored rows (id order). */
    appendLines: (userId: number, lines: string[]) =>
      db
        .insertInto('cloud_log_lines')
        .values(lines.map((line) => ({ user_id: userId, line })))
        .returning(['id', 'line'])
        .execute(),

    /** Keep only the newest `keep` lines of a user (the per-user cap). @returns how many were dropped. */
    async trimLines(userId: number, keep: number): Promise<number> {
      const r = await db
        .deleteFrom('cloud_log_lines')
        .where('user_id', '=', userId)
        .where(
          'id',
          '<=',
          db
            .selectFrom('cloud_log_lines')
            .select('id')
            .where('user_id', '=', userId)
            .orderBy('id', 'desc')
            .offset(keep)
            .limit(1),
        )
        .executeTakeFirst();
      return Number(r.numDeletedRows);
    },

    /** The last `n` lines of the last `windowSeconds`, oldest first. */
    async tail(userId: number, n: number, windowSeconds: number) {
      const rows = await db
        .selectFrom('cloud_log_lines')
        .select(['id', 'line'])
        .where('user_id', '=', userId)
        .where('created_at', '>=', sql<Date>`now() - make_interval(secs => ${windowSeconds})`)
        .orderBy('id', 'desc')
        .limit(n)
        .execute();
      return rows.reverse();
    },

    /** Lines older than `seconds` are dropped. @returns how many. */
    async purgeLines(seconds: number): Promise<number> {
      const r = await db
        .deleteFrom('cloud_log_lines')
        .where('created_at', '<', sql<Date>`now() - make_interval(secs => ${seconds})`)
        .executeTakeFirst();
      return Number(r.numDeletedRows);
    },

    /** Every line of the user, oldest first (the export). */
    linesOf: (userId: number) =>
      db
        .selectFrom('cloud_log_lines')
        .select(['line', 'created_at'])
        .where('user_id', '=', userId)
        .orderBy('id')
        .execute(),

    // Personal data.

    /** The user's container and waitlist rows for the export (no key material). */
    async exportOf(userId: number) {
      const container = await db
        .selectFrom('cloud_containers')
        .select([
          'container_id',
          'runtime',
          'status',
          'agent_authed',
          'codehost_authed',
          'ssh_public_key',
          'last_active',
          'created_at',
        ])
        .where('user_id', '=', userId)
        .executeTakeFirst();
      const waitlist = await db
        .selectFrom('cloud_waitlist')
        .select(['status', 'note', 'joined_at', 'invited_at', 'activated_at'])
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return { container: container ?? null, waitlist: waitlist ?? null };
    },

    /** Delete the user's cloud rows inside the erasure transaction. @returns the container row it had, if any. */
    async eraseUser(tx: Transaction<DB>, userId: number): Promise<Pick<ContainerRow, 'container_id'> | undefined> {
      await tx.deleteFrom('cloud_log_lines').where('user_id', '=', userId).execute();
      await tx.deleteFrom('cloud_waitlist').where('user_id', '=', userId).execute();
      return tx
        .deleteFrom('cloud_containers')
        .where('user_id', '=', userId)
        .returning('container_id')
        .executeTakeFirst();
    },

    // Leases.

    /**
     * Take the lease `name` for `seconds` when it is free (or expired): one atomic statement, so of several
     * instances asking at the same moment one gets it. @returns whether this caller holds it now.
     */
    async takeLease(name: string, seconds: number): Promise<boolean> {
      const r = await sql<{ name: string }>`
        insert into cloud_leases (name, until) values (${name}, now() + make_interval(secs => ${seconds}))
        on conflict (name) do update set until = excluded.until where cloud_leases.until <= now()
        returning name`.execute(db);
      return r.rows.length > 0;
    },
  };
}

export type CloudRepo = ReturnType<typeof createCloudRepo>;
