/**
 * SQL of the usage area: `token_usage` (one row per LLM call), `trials` (one grant per user) and
 * `token_reservations` (the worst case of model calls under way). Nobody else reads or writes these tables.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { pagedById, purgeOlderThan } from '../../db/privacy-sql.ts';
import { precompiled } from '../../db/precompiled.ts';

export type Executor = Kysely<DB> | Transaction<DB>;

/** Where a call's key came from: the user's own key, the platform key, or the platform key drawing on a trial. */
export type KeySource = 'own' | 'platform' | 'trial';

export interface UsageRowInput {
  userId: number | null;
  projectId: number | null;
  projectName: string | null;
  workerId: number | null;
  runId?: number | null;
  model: string | null;
  source: string;
  keySource: KeySource;
  input: number;
  output: number;
  cache: number;
}

/** Namespace of the per-owner budget lock (`pg_advisory_xact_lock(int, int)`). */
const BUDGET_LOCK = 30_002;
/** Namespace of the per-owner creation lock (projects and workers under the plan limits). */
const CREATION_LOCK = 30_001;

// A model call's reservation and settlement, compiled once (db/precompiled.ts): two statements of every call.
const INSERT_RESERVATION = precompiled<{ id: number }>(
  `insert into token_reservations (user_id, project_id, worker_id, run_id, key_source, tokens, expires_at,
     instance_id, project_name, model, source, prompt_tokens)
   values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) returning id`,
);
const SETTLE_RESERVATION = precompiled(
  `with d as (delete from token_reservations where id = $1 returning id)
   insert into token_usage (user_id, project_id, project_name, worker_id, run_id, model, source, key_source,
                            input_tokens, output_tokens, cache_tokens, total_tokens)
   select $2::bigint, $3::bigint, $4::text, $5::bigint, $6::bigint, $7::text, $8::text, $9::text,
          $10::bigint, $11::bigint, $12::bigint, $13::bigint
   from d`,
);

const sumTotal = sql<number>`coalesce(sum(total_tokens), 0)::bigint`;
const sumReserved = sql<number>`coalesce(sum(tokens), 0)::bigint`;

export function createUsageRepo(db: Kysely<DB>) {
  return {
    /** A user's stored bytes and when they were measured (storage quotas); undefined before the first measure. */
    async storageRow(userId: number): Promise<{ bytes: number; measured_at: Date } | undefined> {
      const r = await db
        .selectFrom('storage_usage')
        .select(['bytes', 'measured_at'])
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return r && { bytes: Number(r.bytes), measured_at: r.measured_at };
    },

    /** Store a fresh measure of a user's bytes (now). */
    async setStorage(userId: number, bytes: number): Promise<void> {
      await db
        .insertInto('storage_usage')
        .values({ user_id: userId, bytes, measured_at: new Date() })
        .onConflict((oc) => oc.column('user_id').doUpdateSet({ bytes, measured_at: new Date() }))
        .execute();
    },

    /**
     * Grant `bytes` to a write in one statement: the row grows by `bytes` when that keeps it within `quota` (a write of
     * 0 bytes needs one byte of room). @returns the new total, or null when refused.
     */
    async chargeStorage(userId: number, bytes: number, quota: number): Promise<number | null> {
      const r = await db
        .updateTable('storage_usage')
        .set({ bytes: sql`bytes + ${bytes}::bigint` })
        .where('user_id', '=', userId)
        .where(sql<boolean>`bytes + greatest(${bytes}::bigint, 1) <= ${quota}::bigint`)
        .returning('bytes')
        .executeTakeFirst();
      return r ? Number(r.bytes) : null;
    },

    /** Mark a user's measure stale (files were removed or written outside the grants): the next check measures. */
    async staleStorage(userId: number): Promise<void> {
      await db
        .updateTable('storage_usage')
        .set({ measured_at: new Date(0) })
        .where('user_id', '=', userId)
        .execute();
    },

    /** Run `fn` in one transaction. */
    transaction: <T>(fn: (tx: Transaction<DB>) => Promise<T>): Promise<T> => db.transaction().execute(fn),

    /** Serialize budget decisions of one owner for the rest of the transaction. */
    async lockOwner(tx: Transaction<DB>, userId: number): Promise<void> {
      await sql`select pg_advisory_xact_lock(${BUDGET_LOCK}::int, ${userId}::int)`.execute(tx);
    },

    /** Serialize project and worker creation of one owner for the rest of the transaction. */
    async lockCreation(tx: Transaction<DB>, ownerId: number): Promise<void> {
      await sql`select pg_advisory_xact_lock(${CREATION_LOCK}::int, ${ownerId}::int)`.execute(tx);
    },

    /** Insert one usage row; `total_tokens` = input + output + cache. */
    async insert(r: UsageRowInput, ex: Executor = db): Promise<void> {
      await ex
        .insertInto('token_usage')
        .values({
          user_id: r.userId,
          project_id: r.projectId,
          project_name: r.projectName,
          worker_id: r.workerId,
          run_id: r.runId ?? null,
          model: r.model,
          source: r.source,
          key_source: r.keySource,
          input_tokens: r.input,
          output_tokens: r.output,
          cache_tokens: r.cache,
          total_tokens: r.input + r.output + r.cache,
        })
        .execute();
    },

    /** Tokens of a worker's calls since `since`. */
    async workerSince(workerId: number, since: Date, ex: Executor = db): Promise<number> {
      const r = await ex
        .selectFrom('token_usage')
        .select(sumTotal.as('n'))
        .where('worker_id', '=', workerId)
        .where('created_at', '>=', since)
        .executeTakeFirst();
      return Number(r?.n ?? 0);
    },

    /** Tokens drawn from a user's trial (`key_source = 'trial'`) since `since`. */
    async trialSince(userId: number, since: Date, ex: Executor = db): Promise<number> {
      const r = await ex
        .selectFrom('token_usage')
        .select(sumTotal.as('n'))
        .where('user_id', '=', userId)
        .where('key_source', '=', 'trial')
        .where('created_at', '>=', since)
        .executeTakeFirst();
      return Number(r?.n ?? 0);
    },

    /**
     * A worker's budget use: its calls' tokens since `since` plus its live reservations (not expired), in one
     * statement, so one snapshot: a call settling meanwhile (`settleReservation`) is counted once, as reserved or as
     * used, never neither.
     */
    async workerBudgetUsed(workerId: number, since: Date, ex: Executor = db): Promise<number> {
      const r = await sql<{ n: number }>`
        select (select ${sumTotal} from token_usage where worker_id = ${workerId} and created_at >= ${since})
             + (select ${sumReserved} from token_reservations where worker_id = ${workerId} and expires_at > ${new Date()})
               as n`.execute(ex);
      return Number(r.rows[0]?.n ?? 0);
    },

    /**
     * Tokens drawn from a user's trial since `since` plus its live reservations, in one statement (one snapshot, as
     * `workerBudgetUsed`).
     */
    async trialBudgetUsed(userId: number, since: Date, ex: Executor = db): Promise<number> {
      const r = await sql<{ n: number }>`
        select (select ${sumTotal} from token_usage
                 where user_id = ${userId} and key_source = 'trial' and created_at >= ${since})
             + (select ${sumReserved} from token_reservations
                 where user_id = ${userId} and key_source = 'trial' and expires_at > ${new Date()})
               as n`.execute(ex);
      return Number(r.rows[0]?.n ?? 0);
    },

    async insertReservation(
      r: {
        userId: number;
        projectId: number | null;
        workerId: number | null;
        runId: number | null;
        keySource: KeySource;
        tokens: number;
        expiresAt: Date;
        /** What the call is, for charging it if it never settles (`settleReservations`). */
        instanceId?: string | null;
        projectName?: string | null;
        model?: string | null;
        source?: string | null;
        promptTokens?: number | null;
      },
      ex: Executor = db,
    ): Promise<number> {
      const res = await INSERT_RESERVATION(ex, [
        r.userId,
        r.projectId,
        r.workerId,
        r.runId,
        r.keySource,
        r.tokens,
        r.expiresAt,
        r.instanceId ?? null,
        r.projectName ?? null,
        r.model ?? null,
        r.source ?? null,
        r.promptTokens ?? null,
      ]);
      return Number(res.rows[0].id);
    },

    /** Delete reservation `id`. @returns whether it was there (not yet charged or released). */
    async deleteReservation(id: number, ex: Executor = db): Promise<boolean> {
      const r = await ex.deleteFrom('token_reservations').where('id', '=', id).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },

    /**
     * Settle reservation `id` with the call's real usage `r`: the reservation is deleted and the usage row inserted
     * in one statement, only when the reservation was still there (a reservation already charged by
     * `settleReservations` stays the charge: a call is counted once). One statement is one snapshot and commits at
     * once, so a budget sum (`workerBudgetUsed`, `trialBudgetUsed`) sees the call either reserved or used.
     * @returns whether the row was written.
     */
    async settleReservation(id: number, r: UsageRowInput, ex: Executor = db): Promise<boolean> {
      const res = await SETTLE_RESERVATION(ex, [
        id,
        r.userId,
        r.projectId,
        r.projectName,
        r.workerId,
        r.runId ?? null,
        r.model,
        r.source,
        r.keySource,
        r.input,
        r.output,
        r.cache,
        r.input + r.output + r.cache,
      ]);
      return Number(res.numAffectedRows ?? 0) > 0;
    },

    /**
     * Charge reservations whose calls never settled (cut by a crash or a stop): each becomes a usage row marked
     * `estimated`, with the prompt estimate as input and the output granted as output (its worst case), in one
     * statement, so a reservation is charged once and never both charged and settled.
     * @param which reservation `ids`, those of runs `runIds`, of instances `instanceIds`, or `expired` ones.
     * @returns the rows written: run id and tokens of each.
     */
    async settleReservations(
      which: { ids: number[] } | { runIds: number[] } | { instanceIds: string[] } | { expired: true },
      ex: Executor = db,
    ): Promise<Array<{ run_id: number | null; total_tokens: number }>> {
      const cond =
        'ids' in which
          ? which.ids.length
            ? sql`id in (${sql.join(which.ids)})`
            : null
          : 'runIds' in which
            ? which.runIds.length
              ? sql`run_id in (${sql.join(which.runIds)})`
              : null
            : 'instanceIds' in which
              ? which.instanceIds.length
                ? sql`instance_id in (${sql.join(which.instanceIds)})`
                : null
              : sql`expires_at <= now()`;
      if (!cond) return [];
      const r = await sql<{ run_id: number | null; total_tokens: number }>`
        with d as (delete from token_reservations where ${cond} returning *)
        insert into token_usage (user_id, project_id, project_name, worker_id, run_id, model, source, key_source,
                                 input_tokens, output_tokens, cache_tokens, total_tokens, estimated)
        select user_id, project_id, project_name, worker_id, run_id, model, coalesce(source, 'model_call'), key_source,
               least(coalesce(prompt_tokens, tokens), tokens), tokens - least(coalesce(prompt_tokens, tokens), tokens),
               0, tokens, true
        from d
        returning run_id, total_tokens`.execute(ex);
      return r.rows.map((x) => ({ run_id: x.run_id, total_tokens: Number(x.total_tokens) }));
    },

    /** The user's trial grant, if any. */
    trial: (userId: number, ex: Executor = db) =>
      ex.selectFrom('trials').selectAll().where('user_id', '=', userId).executeTakeFirst(),

    async insertTrial(tx: Executor, t: { userId: number; projectId: number | null; tokens: number }): Promise<void> {
      await tx
        .insertInto('trials')
        .values({ user_id: t.userId, project_id: t.projectId, tokens_granted: t.tokens })
        .execute();
    },

    /** The newest `limit` rows of a user. */
    listForUser: (userId: number, limit: number) =>
      db
        .selectFrom('token_usage')
        .select([
          'id',
          'project_name',
          'worker_id',
          'model',
          'input_tokens',
          'output_tokens',
          'cache_tokens',
          'total_tokens',
          'estimated',
          'created_at',
        ])
        .where('user_id', '=', userId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute(),

    /** Sums over a user's rows, optionally since a time. */
    async totalsForUser(userId: number, since?: Date): Promise<{ total: number; input: number; output: number }> {
      let q = db
        .selectFrom('token_usage')
        .select([
          sql<number>`coalesce(sum(total_tokens), 0)::bigint`.as('total'),
          sql<number>`coalesce(sum(input_tokens), 0)::bigint`.as('input'),
          sql<number>`coalesce(sum(output_tokens), 0)::bigint`.as('output'),
        ])
        .where('user_id', '=', userId);
      if (since) q = q.where('created_at', '>=', since);
      const t = await q.executeTakeFirstOrThrow();
      return { total: Number(t.total), input: Number(t.input), output: Number(t.output) };
    },

    /** Token sums per model of a user's calls since `since`, optionally of some key sources only (billing spend). */
    async byModelSince(
      userId: number,
      since: Date,
      keySources?: KeySource[],
    ): Promise<Array<{ model: string | null; input: number; output: number; cache: number }>> {
      let q = db
        .selectFrom('token_usage')
        .select([
          'model',
          sql<number>`coalesce(sum(input_tokens), 0)::bigint`.as('input'),
          sql<number>`coalesce(sum(output_tokens), 0)::bigint`.as('output'),
          sql<number>`coalesce(sum(cache_tokens), 0)::bigint`.as('cache'),
        ])
        .where('user_id', '=', userId)
        .where('created_at', '>=', since);
      if (keySources?.length) q = q.where('key_source', 'in', keySources);
      const rows = await q.groupBy('model').execute();
      return rows.map((r) => ({
        model: r.model,
        input: Number(r.input),
        output: Number(r.output),
        cache: Number(r.cache),
      }));
    },

    /** Tokens per project of a user's given projects (all time). */
    async byProject(userId: number, projectIds: number[]): Promise<Map<number, number>> {
      if (!projectIds.length) return new Map();
      const rows = await db
        .selectFrom('token_usage')
        .select(['project_id', sumTotal.as('n')])
        .where('user_id', '=', userId)
        .where('project_id', 'in', projectIds)
        .groupBy('project_id')
        .execute();
      return new Map(rows.map((r) => [Number(r.project_id), Number(r.n)]));
    },

    /** Tokens per UTC day (`YYYY-MM-DD`) of a project in `[since, end)`. */
    async dailyForProject(projectId: number, since: Date, end: Date): Promise<Array<{ day: string; n: number }>> {
      const day = sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD')`;
      const rows = await db
        .selectFrom('token_usage')
        .select([day.as('day'), sumTotal.as('n')])
        .where('project_id', '=', projectId)
        .where('created_at', '>=', since)
        .where('created_at', '<', end)
        .groupBy(day)
        .execute();
      return rows.map((r) => ({ day: r.day, n: Number(r.n) }));
    },

    /** Tokens per UTC day of a worker: the newest `limit` days with usage, newest first, with the last call's time. */
    async dailyForWorker(workerId: number, limit: number): Promise<Array<{ day: string; n: number; last: Date }>> {
      const day = sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD')`;
      const rows = await db
        .selectFrom('token_usage')
        .select([day.as('day'), sumTotal.as('n'), sql<Date>`max(created_at)`.as('last')])
        .where('worker_id', '=', workerId)
        .groupBy(day)
        .orderBy(day, 'desc')
        .limit(limit)
        .execute();
      return rows.map((r) => ({ day: r.day, n: Number(r.n), last: new Date(r.last) }));
    },

    // Personal data (privacy export and erasure, retention).

    /** The export's `token_usage` of a user, oldest first, read 500 at a time. */
    exportUser: (userId: number) =>
      pagedById(db, (ex, after, page) =>
        ex
          .selectFrom('token_usage')
          .select([
            'id',
            'project_name',
            'worker_id',
            'model',
            'source',
            'key_source',
            'input_tokens',
            'output_tokens',
            'cache_tokens',
            'total_tokens',
            'created_at',
          ])
          .where('user_id', '=', userId)
          .where('id', '>', after)
          .orderBy('id')
          .limit(page)
          .execute(),
      ),

    /** Erasure: a project's reservations and usage rows (whoever made them); a trial forgets the project. */
    async eraseProject(tx: Transaction<DB>, projectId: number): Promise<void> {
      await tx.deleteFrom('token_reservations').where('project_id', '=', projectId).execute();
      await tx.deleteFrom('token_usage').where('project_id', '=', projectId).execute();
      await tx.updateTable('trials').set({ project_id: null }).where('project_id', '=', projectId).execute();
    },

    /** Erasure: the user's reservations, usage rows (in any project), trial and storage measure. */
    async eraseUser(tx: Transaction<DB>, userId: number): Promise<void> {
      await tx.deleteFrom('token_reservations').where('user_id', '=', userId).execute();
      await tx.deleteFrom('token_usage').where('user_id', '=', userId).execute();
      await tx.deleteFrom('trials').where('user_id', '=', userId).execute();
      await tx.deleteFrom('storage_usage').where('user_id', '=', userId).execute();
    },

    /** Retention: delete usage rows older than `before`, in batches. @returns rows deleted. */
    purge: (before: Date) => purgeOlderThan(db, 'token_usage', 'created_at', before),
  };
}

export type UsageRepo = ReturnType<typeof createUsageRepo>;
