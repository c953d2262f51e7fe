/**
 * SQL of approvals (docs/ARCHITECTURE.md, Approvals): the `approvals` rows of tool calls that waited for a person.
 * A decision and an expiry are each one conditional UPDATE (`status = 'pending'`), so two instances deciding at once
 * record one outcome. The runs they belong to are changed through the runtime repository.
 */
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';

type Executor = Kysely<DB> | Transaction<DB>;

/** An approval row as stored. */
export type ApprovalRow = Selectable<DB['approvals']>;
/** The states of an approval. */
export type ApprovalStatus = ApprovalRow['status'];

/** The repository of approvals (see the module header). */
export function createApprovalsRepo(db: Kysely<DB>) {
  return {
    /** The approval of tool call `toolUseId` of run `runId`, or undefined. */
    forCall: (runId: number, toolUseId: string): Promise<ApprovalRow | undefined> =>
      db
        .selectFrom('approvals')
        .selectAll()
        .where('run_id', '=', runId)
        .where('tool_use_id', '=', toolUseId)
        .executeTakeFirst(),

    /** Whether run `runId` has an approved call of `tool` (for `once_per_run`). */
    async approvedInRun(runId: number, tool: string): Promise<boolean> {
      const r = await db
        .selectFrom('approvals')
        .select('id')
        .where('run_id', '=', runId)
        .where('tool', '=', tool)
        .where('status', '=', 'approved')
        .executeTakeFirst();
      return !!r;
    },

    /**
     * Store a pending approval for a tool call (once per call: a resumed run asking again finds the same row).
     * @returns the row, and whether this call inserted it.
     */
    async request(
      ex: Executor,
      a: {
        projectId: number;
        runId: number;
        workerId: number;
        tool: string;
        toolUseId: string;
        input: Record<string, unknown>;
      },
    ): Promise<{ row: ApprovalRow; created: boolean }> {
      const ins = await ex
        .insertInto('approvals')
        .values({
          project_id: a.projectId,
          run_id: a.runId,
          worker_id: a.workerId,
          tool: a.tool,
          tool_use_id: a.toolUseId,
          input: JSON.stringify(a.input),
        })
        .onConflict((oc) => oc.columns(['run_id', 'tool_use_id']).doNothing())
        .returningAll()
        .executeTakeFirst();
      if (ins) return { row: ins, created: true };
      const row = await ex
        .selectFrom('approvals')
        .selectAll()
        .where('run_id', '=', a.runId)
        .where('tool_use_id', '=', a.toolUseId)
        .executeTakeFirstOrThrow();
      return { row, created: false };
    },

    /** A project's approvals, newest first, in one state when given (at most `limit`). */
    list: (projectId: number, q: { status?: ApprovalStatus; limit: number }): Promise<ApprovalRow[]> => {
      let query = db.selectFrom('approvals').selectAll().where('project_id', '=', projectId);
      if (q.status) query = query.where('status', '=', q.status);
      return query.orderBy('id', 'desc').limit(q.limit).execute();
    },

    /** Approval `id` of any project, or undefined (the notice jobs). */
    byId: (id: number): Promise<ApprovalRow | undefined> =>
      db.selectFrom('approvals').selectAll().where('id', '=', id).executeTakeFirst(),

    /** Approval `id` of project `projectId`, or undefined. */
    get: (projectId: number, id: number): Promise<ApprovalRow | undefined> =>
      db
        .selectFrom('approvals')
        .selectAll()
        .where('id', '=', id)
        .where('project_id', '=', projectId)
        .executeTakeFirst(),

    /**
     * Record the decision on approval `id` if it is still pending (one conditional UPDATE).
     * @returns the decided row, or undefined when it was decided (or expired) before.
     */
    decide: (
      ex: Executor,
      id: number,
      d: {
        status: 'approved' | 'denied' | 'expired';
        reason: string | null;
        decidedBy: string;
        decidedByUser: number | null;
        channel: NonNullable<ApprovalRow['channel']>;
        /** Only when created at or before this time (an expiry). */
        createdBefore?: Date;
      },
    ): Promise<ApprovalRow | undefined> => {
      let q = ex
        .updateTable('approvals')
        .set({
          status: d.status,
          reason: d.reason,
          decided_by: d.decidedBy,
          decided_by_user: d.decidedByUser,
          channel: d.channel,
          decided_at: new Date(),
        })
        .where('id', '=', id)
        .where('status', '=', 'pending');
      if (d.createdBefore) q = q.where('created_at', '<=', d.createdBefore);
      return q.returningAll().executeTakeFirst();
    },

    /**
     * A project's approvals for the privacy export, oldest first: `{id, run_id, worker_id, tool, input, status,
     * reason, decided_by, channel, created_at, decided_at}`.
     */
    exportProject: (projectId: number) =>
      db
        .selectFrom('approvals')
        .select([
          'id',
          'run_id',
          'worker_id',
          'tool',
          'input',
          'status',
          'reason',
          'decided_by',
          'channel',
          'created_at',
          'decided_at',
        ])
        .where('project_id', '=', projectId)
        .orderBy('id')
        .execute(),

    /** The ids of a project's approvals (the erasure forgets their jobs). */
    async idsOfProject(ex: Executor, projectId: number): Promise<number[]> {
      const rows = await ex.selectFrom('approvals').select('id').where('project_id', '=', projectId).execute();
      return rows.map((r) => r.id);
    },

    /** Erasure: a project's approvals. */
    async eraseProject(tx: Transaction<DB>, projectId: number): Promise<void> {
      await tx.deleteFrom('approvals').where('project_id', '=', projectId).execute();
    },

    /** Erasure: decisions the user made in other projects keep their outcome, but name `[deleted]`. */
    async forgetDecider(tx: Transaction<DB>, userId: number): Promise<void> {
      await tx
        .updateTable('approvals')
        .set({ decided_by: '[deleted]', decided_by_user: null })
        .where('decided_by_user', '=', userId)
        .execute();
    },

    /** Pending approvals of run `runId`. */
    async pendingOfRun(ex: Executor, runId: number): Promise<number> {
      const r = await ex
        .selectFrom('approvals')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('run_id', '=', runId)
        .where('status', '=', 'pending')
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },
  };
}

export type ApprovalsRepo = ReturnType<typeof createApprovalsRepo>;
