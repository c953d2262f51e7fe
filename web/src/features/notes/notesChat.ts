/**
 * The live part of a note's grounded chat as a pure reducer over the stream's events (testable without a
 * browser): `text_delta {delta}` grows the reply, `tool_result {tool:'create_issue', issue_id, title, priority}`
 * adds a created-issue line before it, `error {message}` marks the reply failed, `done {sources}` closes it with
 * the sources it was grounded in. The earlier messages come from the note itself.
 */

export interface GroundSource {
  source_id: number;
  title: string;
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
