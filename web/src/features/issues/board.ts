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

export const PRIORITIES = ['P0', 'P1', 'P2', 'P3'] as const;
export type Priority = (typeof PRIORITIES)[number];

export const PRIORITY_LABELS: Record<Priority, string> = {
  P0: msg('Urgent'),
  P1: msg('High'),
  P2: msg('Normal'),
  P3: msg('Low'),
};

/** Up to two initials of a name ("Market researcher" → "MR", "ann" → "A"), for an avatar; "?" for none. */
export function initials(name: string | null | undefined): string {
  const words = (name ?? '')
    .trim()
    .split(/[\s_.@-]+/u)
    .filter(Boolean);
  const letters = words.slice(0, 2).map((w) => [...w][0]!.toUpperCase());
  return letters.join('') || '?';
}

/** A stable hue (0–359) for a name, so one assignee's avatar keeps its colour. */
export function hue(name: string): number {
  let h = 0;
  for (const ch of name) h = (h * 31 + ch.codePointAt(0)!) % 360;
  return h;
}

/** An activity entry of an issue as the service writes it (`kind`: create, log, status, assign, take or edit). */
export interface Entry {
  kind?: string;
  author?: string | null;
  message?: string;
  ts?: string;
}

const FIELD_LABELS: Record<string, string> = {
  title: msg('the title'),
  priority: msg('the priority'),
  description: msg('the description'),
  labels: msg('the labels'),
};

/**
 * An activity entry as a sentence in the reader's language ("Ana moved it from Open to In progress"): the entry's
 * kind and its machine-written message (`status open → in_progress`, `assigned to X`, `edited title, priority`)
 * pick the words; `t` translates, `list` joins names (Intl.ListFormat). A log entry is the author's own text.
 */
export function entrySentence(
  e: Entry,
  t: (m: string, v?: Record<string, string>) => string,
  list: (items: string[]) => string,
): string {
  const author = e.author || t('Someone');
  const m = e.message ?? '';
  const status = (s: string) => (s in STATUS_LABELS ? t(STATUS_LABELS[s as Status]) : s);
  switch (e.kind) {
    case 'create':
      return t('{author} created the issue', { author });
    case 'status': {
      const hit = /^status (\w+) → (\w+)$/u.exec(m);
      if (hit)
        return t('{author} moved it from {from} to {to}', { author, from: status(hit[1]!), to: status(hit[2]!) });
      break;
    }
    case 'take': {
      const hit = /^taken by (.+)$/u.exec(m);
      if (hit) return t('{author} started it, assigned to {assignee}', { author, assignee: hit[1]! });
      break;
    }
    case 'assign': {
      if (m === 'unassigned') return t('{author} removed the assignee', { author });
      const hit = /^assigned to (.+)$/u.exec(m);
      if (hit) return t('{author} assigned it to {assignee}', { author, assignee: hit[1]! });
      break;
    }
    case 'edit': {
      const hit = /^edited (.+)$/u.exec(m);
      if (hit) {
        const fields = hit[1]!.split(', ').map((f) => (f in FIELD_LABELS ? t(FIELD_LABELS[f]!) : f));
        return t('{author} changed {fields}', { author, fields: list(fields) });
      }
      break;
    }
    case 'log':
      return m;
  }
  return m;
}
