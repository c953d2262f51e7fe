/**
 * The live part of a note's grounded chat as a pure reducer over the stream's events (testable without a
 * browser): `text_delta {delta}` grows the reply, `tool_result {tool:'create_issue', issue_id, title, priority}`
 * adds a created-issue line before it, `error {message}` marks the reply failed, `citations {citations}` gives the
 * passages it cites (with their place), `done {sources}` closes it with the sources it was grounded in. The earlier
 * messages come from the note itself.
 */
import { interpolate } from '../../i18n';

export interface GroundSource {
  source_id: number;
  title: string;
}

/** Where a cited passage is in its source (the fields that apply to its type). */
export interface PassageLocation {
  page?: number;
  page_end?: number;
  start_ms?: number;
  end_ms?: number;
  heading?: string;
  line_start?: number;
  line_end?: number;
}

/** One citation of an answer, as the stream's `citations` event and the note's chat carry it. */
export interface Citation {
  marker: string;
  source_id: number;
  chunk_id: number | null;
  location: PassageLocation;
  quote: string;
}

/** `00:14:05` of milliseconds. */
export function clockOf(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(Math.floor(s / 3600))}:${two(Math.floor(s / 60) % 60)}:${two(s % 60)}`;
}

/**
 * The place of a citation as a short label: `p. 12`, `pp. 12–13`, `00:14:05`, `§ Setup › Database`, `lines 3–9`;
 * '' when the location says nothing. With the UI's `t` the words are the locale's (`с. 12`, `рядки 3–9`); without
 * it, English (the form the answer's own text uses).
 */
export function placeLabel(
  loc: PassageLocation | null | undefined,
  t: (msgid: string, vars?: Record<string, string | number>) => string = interpolate,
): string {
  if (!loc) return '';
  if (loc.page !== undefined)
    return loc.page_end && loc.page_end > loc.page
      ? t('pp. {from}–{to}', { from: loc.page, to: loc.page_end })
      : t('p. {page}', { page: loc.page });
  if (loc.start_ms !== undefined) return clockOf(loc.start_ms);
  if (loc.heading) return `§ ${loc.heading}`;
  if (loc.line_start !== undefined)
    return loc.line_end && loc.line_end > loc.line_start
      ? t('lines {from}–{to}', { from: loc.line_start, to: loc.line_end })
      : t('line {line}', { line: loc.line_start });
  return '';
}

/**
 * The lines (1-based, inclusive) a citation points at in a source's text: its line range, else the line of its
 * heading's last part, else the line holding the start of its quote; null when none is found.
 */
export function citedLines(text: string, c: Pick<Citation, 'location' | 'quote'>): [number, number] | null {
  const loc = c.location;
  if (loc.line_start !== undefined) return [loc.line_start, loc.line_end ?? loc.line_start];
  const lines = text.split('\n');
  if (loc.heading) {
    const last = loc.heading.split(' › ').pop()!.trim();
    const i = lines.findIndex(
      (l) => /^#{1,6}\s/.test(l) && l.replace(/^#{1,6}\s+/, '').replace(/\s*#*\s*$/, '') === last,
    );
    if (i >= 0) return [i + 1, i + 1];
  }
  const head = c.quote.trim().slice(0, 60);
  if (head) {
    const i = lines.findIndex((l) => l.includes(head));
    if (i >= 0) return [i + 1, i + 1];
  }
  return null;
}

export interface LiveLine {
  key: string;
  role: 'user' | 'assistant' | 'issue';
  text: string;
  streaming?: boolean;
  error?: string;
  /** The created issue (role `issue`). */
  issue?: { id: number; title: string; priority: string };
  /** The sources the answer was grounded in (role `assistant`, after `done`). */
  sources?: GroundSource[];
  /** The passages the answer cites (role `assistant`, after `citations`). */
  citations?: Citation[];
}

export type NoteChatAction =
  | { type: 'send'; text: string; key: string }
  | { type: 'event'; event: string; data: any }
  | { type: 'failed'; message: string }
  | { type: 'clear' }
  | { type: 'settle' };

/** The last line when it is the reply being streamed, else -1. */
function streaming(lines: LiveLine[]): number {
  const i = lines.length - 1;
  return i >= 0 && lines[i].role === 'assistant' && lines[i].streaming ? i : -1;
}

/**
 * The next live lines after `action` (a new array; unknown events change nothing). `settle` (the note was read
 * again, so it holds the question and the answer) keeps only the created-issue lines; `clear` drops all.
 */
export function noteChatReducer(lines: LiveLine[], action: NoteChatAction): LiveLine[] {
  if (action.type === 'clear') return [];
  if (action.type === 'settle') return lines.filter((l) => l.role === 'issue');
  if (action.type === 'send')
    return [
      ...lines,
      { key: `u-${action.key}`, role: 'user', text: action.text },
      { key: `a-${action.key}`, role: 'assistant', text: '', streaming: true },
    ];
  const i = streaming(lines);
  if (i < 0) return lines;
  const out = lines.slice();
  const reply = out[i];
  if (action.type === 'failed') {
    out[i] = { ...reply, streaming: false, error: action.message };
    return out;
  }
  const data = action.data ?? {};
  switch (action.event) {
    case 'text_delta':
      if (typeof data.delta !== 'string') return lines;
      out[i] = { ...reply, text: reply.text + data.delta };
      return out;
    case 'tool_result':
      if (data.tool !== 'create_issue' || typeof data.issue_id !== 'number') return lines;
      out.splice(i, 0, {
        key: `${reply.key}-i${data.issue_id}`,
        role: 'issue',
        text: String(data.title ?? ''),
        issue: { id: data.issue_id, title: String(data.title ?? ''), priority: String(data.priority ?? '') },
      });
      return out;
    case 'error':
      out[i] = { ...reply, error: String(data.message ?? data.error ?? 'error') };
      return out;
    case 'citations':
      out[i] = { ...reply, citations: Array.isArray(data.citations) ? data.citations : [] };
      return out;
    case 'done':
      out[i] = {
        ...reply,
        streaming: false,
        sources: Array.isArray(data.sources) ? data.sources : [],
        error: reply.error ?? (data.error ? String(data.error) : undefined),
      };
      return out;
    default:
      return lines;
  }
}

/**
 * The body of a chat request: `{message}` for all sources (`selected` null), else with `selectedSourceIds`.
 */
export function chatBody(
  message: string,
  selected: number[] | null,
): { message: string; selectedSourceIds?: number[] } {
  return selected === null ? { message } : { message, selectedSourceIds: selected };
}
