/**
 * The CLI area's SQL: `cli_devices` (one row per user and device), `cli_links` (device-link codes) and
 * `cli_transcripts` (gzip of a session's raw jsonl, one per owner and session id). Every read filters by
 * the owning user.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';

type Executor = Kysely<DB> | Transaction<DB>;

/** A device as the listing shows it. */
export interface DeviceRow {
  device_id: string;
  hostname: string;
  platform: string;
  arc_version: string;
  last_project: string | null;
  first_seen: Date;
  last_seen: Date;
}

/** A transcript's listing fields (no content). */
export interface TranscriptSummaryRow {
  session_id: string;
  worker_id: number | null;
  message_count: number;
  first_prompt: string;
  size_bytes: number;
  updated_at: Date;
}

const SUMMARY_COLS = ['session_id', 'worker_id', 'message_count', 'first_prompt', 'size_bytes', 'updated_at'] as const;

export function createCliRepo(db: Kysely<DB>) {
  return {
    /** Run `fn` in one transaction. */
    transaction: <T>(fn: (tx: Transaction<DB>) => Promise<T>): Promise<T> => db.transaction().execute(fn),

    /** Serialize device check-ins of one user for the rest of the transaction. */
    async lockUser(tx: Transaction<DB>, userId: number): Promise<void> {
      await sql`select pg_advisory_xact_lock(hashtext('cli_devices'), ${userId})`.execute(tx);
    },

    /** Number of devices the user has checked in from. */
    async deviceCount(ex: Executor, userId: number): Promise<number> {
      const r = await ex
        .selectFrom('cli_devices')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('user_id', '=', userId)
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },

    /** Refresh a known device (last_seen = now). @returns false when the device is new. */
    async touchDevice(d: {
      userId: number;
      deviceId: string;
      hostname: string;
      platform: string;
      version: string;
      project: string | null;
    }): Promise<boolean> {
      const r = await db
        .updateTable('cli_devices')
        .set({
          hostname: d.hostname,
          platform: d.platform,
          arc_version: d.version,
          last_project: d.project === null ? sql`cli_devices.last_project` : d.project,
          last_seen: sql`now()`,
        })
        .where('user_id', '=', d.userId)
        .where('device_id', '=', d.deviceId)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) === 1;
    },

    /** Insert or refresh a device (last_seen = now); `first_seen` is kept. */
    async upsertDevice(
      ex: Executor,
      d: {
        userId: number;
        deviceId: string;
        hostname: string;
        platform: string;
        version: string;
        project: string | null;
      },
    ): Promise<void> {
      await ex
        .insertInto('cli_devices')
        .values({
          user_id: d.userId,
          device_id: d.deviceId,
          hostname: d.hostname,
          platform: d.platform,
          arc_version: d.version,
          last_project: d.project,
        })
        .onConflict((oc) =>
          oc.columns(['user_id', 'device_id']).doUpdateSet({
            hostname: d.hostname,
            platform: d.platform,
            arc_version: d.version,
            last_project: d.project === null ? sql`cli_devices.last_project` : d.project,
            last_seen: sql`now()`,
          }),
        )
        .execute();
    },

    /** The user's newest devices by last check-in. */
    devices: (userId: number, limit: number): Promise<DeviceRow[]> =>
      db
        .selectFrom('cli_devices')
        .select(['device_id', 'hostname', 'platform', 'arc_version', 'last_project', 'first_seen', 'last_seen'])
        .where('user_id', '=', userId)
        .orderBy('last_seen', 'desc')
        .orderBy('device_id')
        .limit(limit)
        .execute(),

    /** Forget one of the user's devices (its check-ins). @returns whether there was one. */
    async removeDevice(userId: number, deviceId: string): Promise<boolean> {
      const r = await db
        .deleteFrom('cli_devices')
        .where('user_id', '=', userId)
        .where('device_id', '=', deviceId)
        .executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },

    /** The newest of the user's device check-ins and confirmed CLI logins, or null. */
    async lastCliAt(userId: number): Promise<Date | null> {
      const r = await sql<{ at: Date | null }>`
        select greatest(
          (select max(last_seen) from cli_devices where user_id = ${userId}),
          (select max(confirmed_at) from cli_links where user_id = ${userId})
        ) as at`.execute(db);
      const at = r.rows[0]?.at ?? null;
      return at === null ? null : new Date(at);
    },

    /** Store a new link code (expired codes older than a day are removed on the way). */
    async insertLink(
      code: string,
      secretHash: string,
      expiresAt: Date,
      device: { deviceId: string | null; hostname: string | null } = { deviceId: null, hostname: null },
    ): Promise<void> {
      await db
        .deleteFrom('cli_links')
        .where('expires_at', '<', sql<Date>`now() - interval '1 day'`)
        .execute();
      await db
        .insertInto('cli_links')
        .values({
          code,
          secret_hash: secretHash,
          expires_at: expiresAt,
          device_id: device.deviceId,
          hostname: device.hostname,
        })
        .execute();
    },

    /** A link by its code. */
    linkByCode: (code: string) =>
      db
        .selectFrom('cli_links')
        .select(['code', 'user_id', 'expires_at', 'confirmed_at', 'claimed_at'])
        .where('code', '=', code)
        .executeTakeFirst(),

    /** A link by the hash of its token. */
    linkBySecret: (secretHash: string) =>
      db
        .selectFrom('cli_links')
        .select(['code', 'user_id', 'expires_at', 'confirmed_at', 'claimed_at', 'device_id', 'hostname'])
        .where('secret_hash', '=', secretHash)
        .executeTakeFirst(),

    /** Confirm an open, unexpired link for a user. @returns whether this call confirmed it. */
    async confirmLink(code: string, userId: number): Promise<boolean> {
      const r = await db
        .updateTable('cli_links')
        .set({ user_id: userId, confirmed_at: sql`now()` })
        .where('code', '=', code)
        .where('confirmed_at', 'is', null)
        .where('expires_at', '>', sql<Date>`now()`)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) === 1;
    },

    /** Claim a confirmed link once. @returns its user id when this call claimed it, else undefined. */
    async claimLink(secretHash: string): Promise<number | undefined> {
      const r = await db
        .updateTable('cli_links')
        .set({ claimed_at: sql`now()` })
        .where('secret_hash', '=', secretHash)
        .where('confirmed_at', 'is not', null)
        .where('claimed_at', 'is', null)
        .returning('user_id')
        .executeTakeFirst();
      return r?.user_id ?? undefined;
    },

    /** Insert or replace the transcript of (owner, session id). */
    async upsertTranscript(t: {
      ownerId: number;
      projectId: number;
      sessionId: string;
      workerId: number | null;
      mode: string;
      deviceId: string | null;
      firstPrompt: string;
      messageCount: number;
      sizeBytes: number;
      gzip: Buffer;
    }): Promise<TranscriptSummaryRow> {
      const values = {
        project_id: t.projectId,
        worker_id: t.workerId,
        mode: t.mode,
        device_id: t.deviceId,
        first_prompt: t.firstPrompt,
        message_count: t.messageCount,
        size_bytes: t.sizeBytes,
        gzip: t.gzip,
      };
      return db
        .insertInto('cli_transcripts')
        .values({ owner_id: t.ownerId, session_id: t.sessionId, ...values })
        .onConflict((oc) => oc.columns(['owner_id', 'session_id']).doUpdateSet({ ...values, updated_at: sql`now()` }))
        .returning([...SUMMARY_COLS])
        .executeTakeFirstOrThrow();
    },

    /** The owner's transcripts of a project, newest first. */
    transcripts: (ownerId: number, projectId: number, limit: number): Promise<TranscriptSummaryRow[]> =>
      db
        .selectFrom('cli_transcripts')
        .select([...SUMMARY_COLS])
        .where('owner_id', '=', ownerId)
        .where('project_id', '=', projectId)
        .orderBy('updated_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute(),

    /** Session ids of the owner's transcripts of a project among `sessionIds`. */
    async transcriptSessionIds(ownerId: number, projectId: number, sessionIds: string[]): Promise<string[]> {
      if (!sessionIds.length) return [];
      const rows = await db
        .selectFrom('cli_transcripts')
        .select('session_id')
        .where('owner_id', '=', ownerId)
        .where('project_id', '=', projectId)
        .where('session_id', 'in', sessionIds)
        .execute();
      return rows.map((r) => r.session_id);
    },

    /** One transcript of the owner in a project, with its gzip bytes, or undefined. */
    transcript: (ownerId: number, projectId: number, sessionId: string) =>
      db
        .selectFrom('cli_transcripts')
        .select([...SUMMARY_COLS, 'gzip'])
        .where('owner_id', '=', ownerId)
        .where('project_id', '=', projectId)
        .where('session_id', '=', sessionId)
        .executeTakeFirst(),

    /** Everything the CLI area holds of a user (devices and transcripts without content), for the export. */
    async exportUser(userId: number) {
      const devices = await db
        .selectFrom('cli_devices')
        .select(['device_id', 'hostname', 'platform', 'arc_version', 'last_project', 'first_seen', 'last_seen'])
        .where('user_id', '=', userId)
        .execute();
      const transcripts = await db
        .selectFrom('cli_transcripts')
        .select(['project_id', ...SUMMARY_COLS])
        .where('owner_id', '=', userId)
        .execute();
      return { devices, transcripts };
    },

    /** Delete the user's devices, links and transcripts (erasure). */
    async eraseUser(tx: Transaction<DB>, userId: number): Promise<void> {
      await tx.deleteFrom('cli_transcripts').where('owner_id', '=', userId).execute();
      await tx.deleteFrom('cli_devices').where('user_id', '=', userId).execute();
      await tx.deleteFrom('cli_links').where('user_id', '=', userId).execute();
    },

    /** Delete a project's transcripts (erasure of one of the user's projects). */
    async eraseProject(tx: Transaction<DB>, projectId: number): Promise<void> {
      await tx.deleteFrom('cli_transcripts').where('project_id', '=', projectId).execute();
    },
  };
}

export type CliRepo = ReturnType<typeof createCliRepo>;
