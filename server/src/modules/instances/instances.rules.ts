/**
 * Pure rules of instance leases (docs/ARCHITECTURE.md, "Crash recovery and instance leases"): when a starting
 * process may treat another instance's row as its own dead predecessor, without waiting for its lease to lapse.
 */

/** What a process knows of itself. */
export interface Self {
  id: string;
  name: string;
  host: string;
  bootId: string | null;
  pid: number;
  /** When this process started (its own clock). */
  processStartedAt: Date;
  /** The embedded database: one process holds the data directory, so every other process's row is dead. */
  exclusive: boolean;
}

/** Another instance's row as the rule reads it. */
export interface InstanceRow {
  id: string;
  name: string;
  host: string;
  boot_id: string | null;
  pid: number;
  process_started_at: Date;
}

/**
 * Whether `row` is a dead predecessor of `self`, to be taken over at once:
 * - on the embedded database (`exclusive`), any row of another process (another pid, or this pid in a process
 *   that started before this one: a container restarted with the same pid);
 * - on a server, a row of this machine (same host name and kernel boot id) whose process is gone: its pid is not
 *   alive (`isAlive`), or it is this pid but the row's process started before this one.
 * Everything else (another machine, a live pid) waits for its lease to lapse. The row of this very instance is
 * never a predecessor; another instance in this same process (tests build several) is alive.
 */
export function isPredecessor(row: InstanceRow, self: Self, isAlive: (pid: number) => boolean): boolean {
  if (row.id === self.id) return false;
  const samePidEarlierProcess = row.pid === self.pid && +row.process_started_at < +self.processStartedAt - 1000;
  if (self.exclusive) return row.pid !== self.pid || samePidEarlierProcess;
  if (row.host !== self.host || !row.boot_id || row.boot_id !== self.bootId) return false;
  if (row.pid === self.pid) return samePidEarlierProcess;
  return !isAlive(row.pid);
}

/** How often an instance renews its lease of `leaseMs` (a fifth of it: four renewals may fail before it lapses). */
export const renewEvery = (leaseMs: number) => Math.max(200, Math.floor(leaseMs / 5));
