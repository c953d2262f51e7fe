/**
 * SQL of the chat area: `chat_active_roles` (the worker a user's chat in a project talks to by default).
 * Messages and runs belong to the runtime (runtime.repo.ts), workers to the workers area.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';

/** The repository of the chat area (see the module header). */
export function createChatRepo(db: Kysely<DB>) {
  return {
    /** The worker the user chose in the project, or undefined. */
    async activeWorkerId(projectId: number, userId: number): Promise<number | undefined> {
      const r = await db
        .selectFrom('chat_active_roles')
        .select('worker_id')
        .where('project_id', '=', projectId)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return r?.worker_id;
    },

    /** Choose the user's worker in the project (replacing an earlier choice). */
    async setActiveWorker(projectId: number, userId: number, workerId: number): Promise<void> {
      await db
        .insertInto('chat_active_roles')
        .values({ project_id: projectId, user_id: userId, worker_id: workerId })
        .onConflict((oc) =>
          oc.columns(['project_id', 'user_id']).doUpdateSet({ worker_id: workerId, updated_at: new Date() }),
        )
        .execute();
    },

    // Personal data (privacy export and erasure, retention).

    /** Erasure: a project's active roles. */
    async eraseProject(tx: Transaction<DB>, projectId: number): Promise<void> {
      await tx.deleteFrom('chat_active_roles').where('project_id', '=', projectId).execute();
    },

    /** Erasure: the user's active roles in any project. */
    async eraseUser(tx: Transaction<DB>, userId: number): Promise<void> {
      await tx.deleteFrom('chat_active_roles').where('user_id', '=', userId).execute();
    },
  };
}

export type ChatRepo = ReturnType<typeof createChatRepo>;
