import { msg } from '../../i18n';

/** The issues board's columns: the five statuses, in workflow order, each issue in its status's column. */
export const STATUSES = ['open', 'in_progress', 'blocked', 'deferred', 'closed'] as const;
export type Status = (typeof STATUSES)[number];

export const STATUS_LABELS: Record<Status, string> = {
  open: msg('Open'),
  in_progress: msg('In progress'),
  blocked: msg('Blocked'),
  deferred: msg('Deferred'),
  closed: msg('Closed'),
};

const PRIORITY_ORDER: Record<string, number> = { P0: 0, P1: 1, P2: 2, P3: 3 };

/** Group issues by status (every column present, empty ones too), highest priority first, then newest. */
export function toColumns<T extends { status: Status; priority: string; id: number }>(
  issues: readonly T[],
): Record<Status, T[]> {
  const cols = Object.fromEntries(STATUSES.map((s) => [s, [] as T[]])) as Record<Status, T[]>;
  for (const i of issues) (cols[i.status] ?? cols.open).push(i);
  for (const s of STATUSES)
    cols[s].sort((a, b) => (PRIORITY_ORDER[a.priority] ?? 9) - (PRIORITY_ORDER[b.priority] ?? 9) || b.id - a.id);
  return cols;
}

/** The issue a drop moves, or null when the drop changes nothing (unknown issue, same column). */
export function dropMove<T extends { id: number; status: Status }>(
  issues: readonly T[],
  draggedId: number,
  target: Status,
): { id: number; status: Status } | null {
  const issue = issues.find((i) => i.id === draggedId);
  return issue && issue.status !== target ? { id: issue.id, status: target } : null;
}
