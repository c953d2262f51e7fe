/**
 * What the cloud area holds of a user (lib/personal-data.ts): the container row (without its sealed SSH
 * key), the waitlist entry and the container's log lines. Erasure deletes the rows in the transaction, then
 * removes the container (and, for the process runtime, its home under DATA_DIR) — a runtime failure is logged
 * and never blocks the erasure.
 */
import type { PersonalData } from '../../lib/personal-data.ts';
import type { ContainerRuntime } from '../../providers/containers/index.ts';
import type { CloudRepo } from './cloud.repo.ts';

export function cloudPersonalData(deps: {
  repo: Pick<CloudRepo, 'exportOf' | 'linesOf' | 'eraseUser'>;
  runtime: Pick<ContainerRuntime, 'remove'>;
  log: { warn(o: object, m: string): void };
}): PersonalData {
  const erased = new Map<number, string>();
  return {
    area: 'cloud',
    async exportUser(userId) {
      const rows = await deps.repo.exportOf(userId);
      return { ...rows, log_lines: await deps.repo.linesOf(userId) };
    },
    async eraseUser(tx, userId) {
      const row = await deps.repo.eraseUser(tx, userId);
      if (row) erased.set(userId, row.container_id);
    },
    async afterErase({ userId }) {
      const containerId = erased.get(userId) ?? '';
      erased.delete(userId);
      try {
        await deps.runtime.remove(containerId, userId);
      } catch (err) {
        deps.log.warn({ err: (err as Error).message, user: userId }, 'cloud container not removed after erasure');
      }
    },
  };
}
