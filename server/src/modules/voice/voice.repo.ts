/** The voice area's SQL: estimated dictation seconds per user and UTC day, and dictations under way. */
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/types.ts';

const VOICE_LOCK = 1_201_001;
const today = sql<string>`(now() at time zone 'utc')::date`;

export function createVoiceRepo(db: Kysely<DB>) {
  return {
    /** Seconds used today (UTC) by `userId`. */
    async usedToday(userId: number): Promise<number> {
      const r = await db
        .selectFrom('voice_usage')
        .select('seconds')
        .where('user_id', '=', userId)
        .where('day', '=', today)
        .executeTakeFirst();
      return r?.seconds ?? 0;
    },

    /** Dictations of `userId` under way (rows not expired). */
    async running(userId: number): Promise<number> {
      const r = await db
        .selectFrom('voice_jobs')
        .select(db.fn.countAll<number>().as('n'))
        .where('user_id', '=', userId)
        .where('expires_at', '>', sql<Date>`now()`)
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },

    /**
     * Under the user's lock: refuse when `maxRunning` dictations are under way or `seconds` more would pass
     * `dailyLimit`; otherwise count the seconds and register the dictation (valid `ttlSeconds`).
     * @returns the job id, or why it was refused with today's use.
     */
    async begin(
      userId: number,
      seconds: number,
      limits: { dailyLimit: number; maxRunning: number; ttlSeconds: number },
    ): Promise<{ ok: true; jobId: number } | { ok: false; reason: 'busy' | 'quota'; used: number }> {
      return db.transaction().execute(async (tx) => {
        await sql`select pg_advisory_xact_lock(${VOICE_LOCK}::int, ${userId}::int)`.execute(tx);
        await tx
          .deleteFrom('voice_jobs')
          .where('user_id', '=', userId)
          .where('expires_at', '<=', sql<Date>`now()`)
          .execute();
        const n = await tx
          .selectFrom('voice_jobs')
          .select(tx.fn.countAll<number>().as('n'))
          .where('user_id', '=', userId)
          .executeTakeFirstOrThrow();
        const usedRow = await tx
          .selectFrom('voice_usage')
          .select('seconds')
          .where('user_id', '=', userId)
          .where('day', '=', today)
          .executeTakeFirst();
        const used = usedRow?.seconds ?? 0;
        if (Number(n.n) >= limits.maxRunning) return { ok: false as const, reason: 'busy' as const, used };
        if (used + seconds > limits.dailyLimit) return { ok: false as const, reason: 'quota' as const, used };
        await sql`insert into voice_usage (user_id, day, seconds) values (${userId}, ${today}, ${seconds})
                  on conflict (user_id, day) do update set seconds = voice_usage.seconds + ${seconds}`.execute(tx);
        const job = await tx
          .insertInto('voice_jobs')
          .values({ user_id: userId, expires_at: sql<Date>`now() + make_interval(secs => ${limits.ttlSeconds})` })
          .returning('id')
          .executeTakeFirstOrThrow();
        return { ok: true as const, jobId: job.id };
      });
    },

    /** The dictation ended. */
    async end(jobId: number): Promise<void> {
      await db.deleteFrom('voice_jobs').where('id', '=', jobId).execute();
    },

    /** Give back `seconds` of today (the dictation failed); never below 0. */
    async refund(userId: number, seconds: number): Promise<void> {
      await sql`update voice_usage set seconds = greatest(seconds - ${seconds}, 0)
                where user_id = ${userId} and day = ${today}`.execute(db);
    },

    /** The user's daily use, for the privacy export. */
    usageOf: (userId: number) =>
      db.selectFrom('voice_usage').select(['day', 'seconds']).where('user_id', '=', userId).orderBy('day').execute(),

    async deleteFor(tx: Kysely<DB>, userId: number): Promise<void> {
      await tx.deleteFrom('voice_usage').where('user_id', '=', userId).execute();
      await tx.deleteFrom('voice_jobs').where('user_id', '=', userId).execute();
    },
  };
}

export type VoiceRepo = ReturnType<typeof createVoiceRepo>;
