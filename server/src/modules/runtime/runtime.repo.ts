/**
 * SQL of the worker runtime: `agent_runs` and `chat_messages` (a user's message is stored with its runs in
 * one transaction, and a run's reply with its final state). Projects and workers are read through their
 * own repositories; the chat area reads messages and run states here.
 */
import { type ExpressionBuilder, type Kysely, type Selectable, sql, type Transaction, type Updateable } from 'kysely';
import type { DB } from '../../db/types.ts';
import { pagedById, purgeOlderThan } from '../../db/privacy-sql.ts';
import { precompiled } from '../../db/precompiled.ts';

type Executor = Kysely<DB> | Transaction<DB>;

/** A run row as stored. */
export type RunRow = Selectable<DB['agent_runs']>;
/** The states of a run. */
export type RunStatus = RunRow['status'];
/**
 * Columns of a run written with its next write instead of on their own (its totals after a model call, its model
 * plan): `beginTurn`, `saveJournal`, `beginTurnWithJournal` and `updateRun` take them along.
 */
export type RunPatch = Pick<
  Updateable<DB['agent_runs']>,
  'model' | 'cascade' | 'input_tokens' | 'output_tokens' | 'cache_tokens' | 'total_tokens'
>;

/** `RunPatch`'s columns as $1–$6 of the turn statements below: a null leaves its column as it is. */
const PATCH_SET = `model = coalesce($1, model), cascade = coalesce($2, cascade),
  input_tokens = coalesce($3, input_tokens), output_tokens = coalesce($4, output_tokens),
  cache_tokens = coalesce($5, cache_tokens), total_tokens = coalesce($6, total_tokens)`;
const patchParams = (p: RunPatch) => [
  p.model ?? null,
  p.cascade ?? null,
  p.input_tokens ?? null,
  p.output_tokens ?? null,
  p.cache_tokens ?? null,
  p.total_tokens ?? null,
];
// A run's turn writes (beginTurn, saveJournal, beginTurnWithJournal), compiled once (db/precompiled.ts).
const BEGIN_TURN = precompiled<{ cancel_requested: boolean }>(
  `update agent_runs set ${PATCH_SET}, heartbeat_at = $7, turns = $8 where id = $9 returning cancel_requested`,
);
const SAVE_JOURNAL = precompiled(
  `update agent_runs set ${PATCH_SET}, journal = $7, heartbeat_at = $8, turns = $9
   where id = $10 and status = 'running' and instance_id = $11 and replays = $12`,
);
const BEGIN_TURN_WITH_JOURNAL = precompiled<{ cancel_requested: boolean }>(
  `update agent_runs set ${PATCH_SET}, journal = $7, heartbeat_at = $8, turns = $9
   where id = $10 and status = 'running' and instance_id = $11 and replays = $12 returning cancel_requested`,
);

/** Messages that went to `workerId` (alone or among several) or that it wrote. */
const toOrFrom = (workerId: number) => (eb: ExpressionBuilder<DB, 'chat_messages'>) =>
  eb.or([eb('worker_id', '=', workerId), eb('recipients', '@>', sql<any>`${JSON.stringify([workerId])}::jsonb`)]);

/** The claim a running run is under: the instance executing it and how often it was taken back before. */
export interface RunClaim {
  instance_id: string | null;
  replays: number;
}

/** A running run as a recovery reads it. */
export interface RecoveryCandidate extends RunClaim {
  id: number;
  project_id: number;
  user_id: number | null;
  worker_id: number;
  turns: number;
  journal: unknown;
  job_id: string | null;
  created_at: Date;
}

/** The row is under claim `fence` (instance and replays unchanged). */
const claimIs = (fence: RunClaim) => (eb: ExpressionBuilder<DB, 'agent_runs'>) =>
  eb.and([
    fence.instance_id === null ? eb('instance_id', 'is', null) : eb('instance_id', '=', fence.instance_id),
    eb('replays', '=', fence.replays),
  ]);

/** The repository of the worker runtime (see the module header). */
export function createRuntimeRepo(db: Kysely<DB>) {
  return {
    /** Run `fn` in one transaction. */
    transaction: <T>(fn: (tx: Transaction<DB>) => Promise<T>): Promise<T> => db.transaction().execute(fn),

    /** Store a chat message. @returns its id. */
    async insertMessage(
      ex: Executor,
      m: {
        projectId: number;
        userId: number | null;
        workerId: number | null;
        recipients: number[];
        role: 'user' | 'assistant';
        content: string;
        runId?: number | null;
      },
    ): Promise<number> {
      const row = await ex
        .insertInto('chat_messages')
        .values({
          project_id: m.projectId,
          user_id: m.userId,
          worker_id: m.workerId,
          recipients: JSON.stringify(m.recipients),
          role: m.role,
          content: m.content,
          ...(m.runId !== undefined ? { run_id: m.runId } : {}),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    },

    /** Store a queued run answering a message. @returns its id. */
    async insertRun(
      ex: Executor,
      r: {
        projectId: number;
        userId: number;
        workerId: number;
        messageId: number;
        requestedModel: string | null;
        retryOf: number | null;
        engine: string;
      },
    ): Promise<number> {
      const row = await ex
        .insertInto('agent_runs')
        .values({
          project_id: r.projectId,
          user_id: r.userId,
          worker_id: r.workerId,
          message_id: r.messageId,
          requested_model: r.requestedModel,
          retry_of: r.retryOf,
          engine: r.engine,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    },

    /** Run `runId` of project `projectId`, or undefined. */
    run: (projectId: number, runId: number): Promise<RunRow | undefined> =>
      db
        .selectFrom('agent_runs')
        .selectAll()
        .where('id', '=', runId)
        .where('project_id', '=', projectId)
        .executeTakeFirst(),

    /**
     * A project's runs, newest first, with their reply text: at most `limit`, with an id below `before` when
     * given, of one worker and in one state when given.
     */
    listRuns: (
      projectId: number,
      q: { limit: number; before?: number; workerId?: number; status?: RunStatus },
    ): Promise<Array<RunRow & { reply: string | null }>> => {
      let query = db
        .selectFrom('agent_runs as r')
        .leftJoin('chat_messages as m', 'm.id', 'r.reply_message_id')
        .selectAll('r')
        .select('m.content as reply')
        .where('r.project_id', '=', projectId);
      if (q.before !== undefined) query = query.where('r.id', '<', q.before);
      if (q.workerId !== undefined) query = query.where('r.worker_id', '=', q.workerId);
      if (q.status !== undefined) query = query.where('r.status', '=', q.status);
      return query.orderBy('r.id', 'desc').limit(q.limit).execute();
    },

    /** The state of run `runId`, or undefined when it does not exist. */
    async status(runId: number): Promise<RunStatus | undefined> {
      const r = await db.selectFrom('agent_runs').select('status').where('id', '=', runId).executeTakeFirst();
      return r?.status;
    },

    /** The text of message `id`, or undefined. */
    async messageContent(id: number): Promise<string | undefined> {
      const r = await db.selectFrom('chat_messages').select('content').where('id', '=', id).executeTakeFirst();
      return r?.content;
    },

    /**
     * A run's message `messageId` and the worker's conversation before it (`conversation`) in one statement.
     * @returns the message's text (undefined when it is gone) and the newest `limit` earlier messages, newest first.
     */
    async messageWithConversation(
      projectId: number,
      workerId: number,
      messageId: number,
      limit: number,
    ): Promise<{ content: string | undefined; history: Array<{ role: 'user' | 'assistant'; content: string }> }> {
      const rows = await db
        .selectFrom('chat_messages')
        .select(['id', 'role', 'content'])
        .where((eb) =>
          eb.or([
            eb('id', '=', messageId),
            eb.and([eb('project_id', '=', projectId), eb('id', '<', messageId), toOrFrom(workerId)(eb)]),
          ]),
        )
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute();
      const own = rows[0]?.id === messageId ? rows[0] : undefined;
      const history = (own ? rows.slice(1) : rows.slice(0, limit)).map((r) => ({ role: r.role, content: r.content }));
      return { content: own?.content, history };
    },

    /**
     * Lock run `id` for the rest of the transaction. @returns its state, creation time, queue time, and the claim
     * it is under (`instance_id`, `replays`).
     */
    lockRun: (tx: Transaction<DB>, id: number) =>
      tx
        .selectFrom('agent_runs')
        .select(['status', 'created_at', 'queue_ms', 'instance_id', 'replays'])
        .where('id', '=', id)
        .forUpdate()
        .executeTakeFirstOrThrow(),

    /** Change fields of run `id`. */
    async updateRun(id: number, patch: Updateable<DB['agent_runs']>, ex: Executor = db): Promise<void> {
      await ex.updateTable('agent_runs').set(patch).where('id', '=', id).execute();
    },

    /**
     * Claim run `runId` if it is still queued (queued → running, atomically), recording the instance and the
     * time it waited (`queue_ms`). @returns the claimed row, or undefined when another claim won.
     */
    claim: (runId: number, instanceId: string, jobId?: string | null): Promise<RunRow | undefined> =>
      db
        .updateTable('agent_runs')
        .set({
          status: 'running',
          started_at: new Date(),
          heartbeat_at: new Date(),
          instance_id: instanceId,
          job_id: jobId ?? null,
          queue_ms: sql<number>`greatest(0, (extract(epoch from (now() - created_at)) * 1000)::int)`,
        })
        .where('id', '=', runId)
        .where('status', '=', 'queued')
        .returningAll()
        .executeTakeFirst(),

    /**
     * A run waiting for an approval goes back to the queue (its decision was made). @returns whether it was
     * waiting (a cancelled or already requeued run is left alone).
     */
    async requeueWaiting(ex: Executor, runId: number): Promise<boolean> {
      const u = await ex
        .updateTable('agent_runs')
        .set({ status: 'queued', heartbeat_at: null })
        .where('id', '=', runId)
        .where('status', '=', 'waiting_approval')
        .executeTakeFirst();
      return Number(u.numUpdatedRows) > 0;
    },

    /** A running run's heartbeat. */
    async heartbeat(runId: number): Promise<void> {
      await db
        .updateTable('agent_runs')
        .set({ heartbeat_at: new Date() })
        .where('id', '=', runId)
        .where('status', '=', 'running')
        .execute();
    },

    /**
     * Before a turn: heartbeat and turns done (with `patch`'s columns). @returns `cancel_requested`, or undefined when
     * the run is gone.
     */
    beginTurn: async (runId: number, turnsDone: number, patch: RunPatch = {}) =>
      (await BEGIN_TURN(db, [...patchParams(patch), new Date(), turnsDone, runId])).rows[0],

    /** Which of `workerIds` have a run in one of `statuses` (other than `exceptRun`). */
    async workersWithRuns(
      ex: Executor,
      workerIds: number[],
      statuses: RunStatus[],
      exceptRun?: number,
    ): Promise<Set<number>> {
      if (!workerIds.length) return new Set();
      let q = ex
        .selectFrom('agent_runs')
        .select('worker_id')
        .distinct()
        .where('worker_id', 'in', workerIds)
        .where('status', 'in', statuses);
      if (exceptRun !== undefined) q = q.where('id', '<>', exceptRun);
      return new Set((await q.execute()).map((r) => r.worker_id));
    },

    /** How many runs are in each status now (the metrics' runs by status). */
    async countByStatus(): Promise<Record<string, number>> {
      const rows = await db
        .selectFrom('agent_runs')
        .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
        .groupBy('status')
        .execute();
      return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
    },

    /** Whether a run of the worker is running with a heartbeat after `since`. */
    async hasLiveRun(workerId: number, since: Date): Promise<boolean> {
      const row = await db
        .selectFrom('agent_runs')
        .select('id')
        .where('worker_id', '=', workerId)
        .where('status', '=', 'running')
        .where('heartbeat_at', '>', since)
        .executeTakeFirst();
      return !!row;
    },

    /** Queued and running runs of the given workers. */
    liveRuns: (workerIds: number[]) =>
      db
        .selectFrom('agent_runs')
        .select(['id', 'worker_id'])
        .where('worker_id', 'in', workerIds)
        .where('status', 'in', ['queued', 'running'])
        .execute(),

    /** End a running run with `status`, `error` and `message`. @returns whether it was still running. */
    async endRunning(
      id: number,
      end: { status: 'failed' | 'cancelled'; error: string; message: string },
    ): Promise<boolean> {
      const u = await db
        .updateTable('agent_runs')
        .set({ status: end.status, error: end.error, error_message: end.message, finished_at: new Date() })
        .where('id', '=', id)
        .where('status', '=', 'running')
        .executeTakeFirst();
      return Number(u.numUpdatedRows) > 0;
    },

    // Crash recovery (runtime.recovery.ts): every change below holds only under the claim it was decided on
    // (`instance_id` and `replays` unchanged), so a run taken back twice, or by two instances, changes once.

    /**
     * Store a running run's journal (journal.ts) under claim `fence`, with a heartbeat (and `patch`'s columns).
     * @returns false when the run is no longer running under that claim (taken back, or ended).
     */
    async saveJournal(id: number, fence: RunClaim, journal: unknown, patch: RunPatch = {}): Promise<boolean> {
      const u = await SAVE_JOURNAL(db, [
        ...patchParams(patch),
        JSON.stringify(journal),
        new Date(),
        (journal as { turns: number }).turns,
        id,
        fence.instance_id,
        fence.replays,
      ]);
      return Number(u.numAffectedRows ?? 0) > 0;
    },

    /**
     * Before a turn that follows a stored step (journal.ts): `saveJournal` and `beginTurn` in one statement (the
     * journal, a heartbeat and its turns, under claim `fence`; with `patch`'s columns). @returns `cancel_requested`, or undefined when the run
     * is no longer running under that claim (taken back, or ended).
     */
    beginTurnWithJournal: async (id: number, fence: RunClaim, journal: { turns: number }, patch: RunPatch = {}) =>
      (
        await BEGIN_TURN_WITH_JOURNAL(db, [
          ...patchParams(patch),
          JSON.stringify(journal),
          new Date(),
          journal.turns,
          id,
          fence.instance_id,
          fence.replays,
        ])
      ).rows[0],

    /** Running runs (of `ids` when given) with their claim and journal: the candidates of a recovery. */
    runningRuns: (ids?: number[]): Promise<RecoveryCandidate[]> => {
      let q = db
        .selectFrom('agent_runs')
        .select([
          'id',
          'project_id',
          'user_id',
          'worker_id',
          'instance_id',
          'replays',
          'turns',
          'journal',
          'job_id',
          'created_at',
        ])
        .where('status', '=', 'running');
      if (ids) q = q.where('id', 'in', ids.length ? ids : [-1]);
      return q.execute();
    },

    /**
     * A running run back to queued under claim `fence`, counted as a replay; its journal is kept (the next
     * execution resumes from it) and so is a cancel asked meanwhile (it stops before its next turn).
     * @returns whether it was still running under that claim.
     */
    async requeueClaimed(tx: Transaction<DB>, id: number, fence: RunClaim): Promise<boolean> {
      const u = await tx
        .updateTable('agent_runs')
        .set((eb) => ({
          status: 'queued',
          started_at: null,
          heartbeat_at: null,
          instance_id: null,
          job_id: null,
          replays: eb('replays', '+', 1),
        }))
        .where('id', '=', id)
        .where('status', '=', 'running')
        .where(claimIs(fence))
        .executeTakeFirst();
      return Number(u.numUpdatedRows) > 0;
    },

    /** End a running run under claim `fence` as failed with `error` and `message`. @returns whether it was. */
    async failClaimed(
      tx: Transaction<DB>,
      id: number,
      fence: RunClaim,
      end: { error: string; message: string },
    ): Promise<boolean> {
      const u = await tx
        .updateTable('agent_runs')
        .set({
          status: 'failed',
          error: end.error,
          error_message: end.message,
          finished_at: new Date(),
          total_ms: sql<number>`greatest(0, (extract(epoch from (now() - created_at)) * 1000)::int)`,
        })
        .where('id', '=', id)
        .where('status', '=', 'running')
        .where(claimIs(fence))
        .executeTakeFirst();
      return Number(u.numUpdatedRows) > 0;
    },

    /** Cancel a queued run, or one waiting for an approval. @returns whether it was still in one of those states. */
    async cancelQueued(id: number, message: string): Promise<boolean> {
      const u = await db
        .updateTable('agent_runs')
        .set({ status: 'cancelled', error: 'cancelled', error_message: message, finished_at: new Date() })
        .where('id', '=', id)
        .where('status', 'in', ['queued', 'waiting_approval'])
        .executeTakeFirst();
      return Number(u.numUpdatedRows) > 0;
    },

    /** Ask a running run to stop. @returns its heartbeat, or undefined when it is not running. */
    requestCancel: (id: number) =>
      db
        .updateTable('agent_runs')
        .set({ cancel_requested: true })
        .where('id', '=', id)
        .where('status', '=', 'running')
        .returning(['heartbeat_at'])
        .executeTakeFirst(),

    /**
     * A project's messages, newest first: at most `limit`, with id below `before` when given, and only one
     * worker's conversation with `workerId`.
     */
    messages(projectId: number, q: { workerId?: number; before?: number; limit: number }) {
      let query = db
        .selectFrom('chat_messages')
        .select(['id', 'role', 'worker_id', 'content', 'created_at', 'run_id'])
        .where('project_id', '=', projectId);
      if (q.workerId !== undefined) query = query.where(toOrFrom(q.workerId));
      if (q.before !== undefined) query = query.where('id', '<', q.before);
      return query.orderBy('id', 'desc').limit(q.limit).execute();
    },

    // Personal data (privacy export and erasure, retention).

    /** The export's `messages` of a project, oldest first, read 500 at a time. */
    exportMessages: (projectId: number) =>
      pagedById(db, (ex, after, page) =>
        ex
          .selectFrom('chat_messages')
          .select(['id', 'worker_id', 'role', 'content', 'run_id', 'created_at'])
          .where('project_id', '=', projectId)
          .where('id', '>', after)
          .orderBy('id')
          .limit(page)
          .execute(),
      ),

    /** Ids of a project's runs, or of the runs a user asked for elsewhere (their queued jobs are dropped). */
    async runIds(ex: Executor, by: { projectId: number } | { userId: number }): Promise<number[]> {
      const q = ex.selectFrom('agent_runs').select('id');
      const rows = await (
        'projectId' in by
          ? q.where('project_id', '=', by.projectId)
          : q.where((eb) =>
              eb.or([
                eb('user_id', '=', by.userId),
                eb('message_id', 'in', eb.selectFrom('chat_messages').select('id').where('user_id', '=', by.userId)),
              ]),
            )
      ).execute();
      return rows.map((r) => r.id);
    },

    /** Erasure: a project's runs and messages. */
    async eraseProject(tx: Transaction<DB>, projectId: number): Promise<void> {
      await tx.deleteFrom('agent_runs').where('project_id', '=', projectId).execute();
      await tx.deleteFrom('chat_messages').where('project_id', '=', projectId).execute();
    },

    /** Erasure: the runs the user asked for and the messages stored for them in other projects. */
    async eraseUser(tx: Transaction<DB>, userId: number): Promise<void> {
      const mine = tx.selectFrom('chat_messages').select('id').where('user_id', '=', userId);
      await tx
        .deleteFrom('agent_runs')
        .where((eb) => eb.or([eb('user_id', '=', userId), eb('message_id', 'in', mine)]))
        .execute();
      await tx.deleteFrom('chat_messages').where('user_id', '=', userId).execute();
    },

    /** Retention: delete chat messages older than `before` (their runs go with them), in batches. */
    purgeMessages: (before: Date) => purgeOlderThan(db, 'chat_messages', 'created_at', before),
  };
}

export type RuntimeRepo = ReturnType<typeof createRuntimeRepo>;
