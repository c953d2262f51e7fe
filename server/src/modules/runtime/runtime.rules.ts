/**
 * Worker runtime status (docs/ARCHITECTURE.md, Worker runtime): pure rules shared by the runtime
 * and the workers area.
 */

/** A running run whose heartbeat is older than this belongs to a dead process (ms). */
export const STALE_RUN_MS = 90_000;

/** A stored `working` status older than this, with no live session, reads as idle (ms). */
export const STALE_STATUS_MS = 10 * 60_000;

/**
 * The status a worker reports: stored `working`, no live session (no running run with a fresh heartbeat,
 * no terminal-session heartbeat) and a record older than 10 minutes → `idle` (crash detection).
 */
export function reportedWorkerStatus(
  row: { status: string; status_started_at: Date | null },
  sessionAlive: boolean,
  now = new Date(),
): 'working' | 'idle' {
  if (row.status !== 'working') return 'idle';
  if (sessionAlive) return 'working';
  const since = row.status_started_at ? +now - +row.status_started_at : Number.POSITIVE_INFINITY;
  return since > STALE_STATUS_MS ? 'idle' : 'working';
}
