/**
 * The chat as pure rules, testable without a browser.
 *
 * - `liveReducer`: the runs this page follows (`GET …/runs/:id/events`), by run id: `snapshot {text, status,
 *   tool_calls}` sets the text written so far (a re-attach after a reload or a lost connection), `text_delta
 *   {delta}` grows it, `tool_result {tool, is_error, …}` adds a card, `approval_requested` marks the wait, and
 *   `done {status, reply, usage, error}` closes it with the whole reply.
 * - `buildThread`: the transcript from the history, the runs and the live runs: each message of the user, then
 *   one reply per worker it went to (a message to two workers is one thread with both replies).
 */

export interface Usage {
  input_tokens?: number;
  output_tokens?: number;
}

/** A tool call shown as a card: a created issue carries its number, title and priority. */
export interface ToolCard {
  tool: string;
  is_error: boolean;
  summary?: string;
  issue_id?: number;
  title?: string;
  priority?: string;
}

/** A followed run. */
export interface Live {
  text: string;
  tools: ToolCard[];
  status: string;
  streaming: boolean;
  /** The connection was lost; the page is reconnecting. */
  reconnecting?: boolean;
  error?: string;
  usage?: Usage;
}

export type LiveState = Record<number, Live>;

export type LiveAction =
  | { type: 'start'; runId: number }
  | { type: 'event'; runId: number; event: string; data: any }
  | { type: 'lost'; runId: number }
  | { type: 'failed'; runId: number; message: string };

const toCards = (calls: unknown): ToolCard[] =>
  Array.isArray(calls)
    ? calls.map((c: any) => ({ tool: String(c?.tool ?? ''), is_error: !!c?.is_error, summary: c?.summary }))
    : [];

const emptyLive: Live = { text: '', tools: [], status: 'queued', streaming: true };

export function liveReducer(state: LiveState, a: LiveAction): LiveState {
  const cur = state[a.runId];
  switch (a.type) {
    case 'start':
      return { ...state, [a.runId]: { ...emptyLive, ...cur, streaming: true, reconnecting: false } };
    case 'lost':
      return cur ? { ...state, [a.runId]: { ...cur, reconnecting: true } } : state;
    case 'failed':
      return { ...state, [a.runId]: { ...emptyLive, ...cur, streaming: false, error: a.message } };
    case 'event': {
      const live = { ...emptyLive, ...cur, reconnecting: false };
      const d = a.data ?? {};
      switch (a.event) {
        case 'snapshot':
          return {
            ...state,
            [a.runId]: {
              ...live,
              text: typeof d.text === 'string' ? d.text : live.text,
              status: String(d.status ?? live.status),
              tools: live.tools.length ? live.tools : toCards(d.tool_calls),
            },
          };
        case 'text_delta':
          if (typeof d.delta !== 'string') return state;
          return { ...state, [a.runId]: { ...live, status: 'running', text: live.text + d.delta } };
        case 'tool_result': {
          const card: ToolCard = {
            tool: String(d.tool ?? ''),
            is_error: !!d.is_error,
            ...(typeof d.issue_id === 'number' ? { issue_id: d.issue_id } : {}),
            ...(typeof d.title === 'string' ? { title: d.title } : {}),
            ...(typeof d.priority === 'string' ? { priority: d.priority } : {}),
          };
          return { ...state, [a.runId]: { ...live, tools: [...live.tools, card] } };
        }
        case 'approval_requested':
          return { ...state, [a.runId]: { ...live, status: 'waiting_approval' } };
        case 'done':
          return {
            ...state,
            [a.runId]: {
              ...live,
              streaming: false,
              status: String(d.status ?? live.status),
              text: typeof d.reply === 'string' ? d.reply : live.text,
              error: d.error_message ? String(d.error_message) : d.error ? String(d.error) : undefined,
              usage: d.usage ?? live.usage,
            },
          };
        default:
          return state;
      }
    }
  }
}

/** A message of the history. */
export interface HistoryMessage {
  id: number;
  role: 'user' | 'assistant';
  worker_id: number | null;
  content: string;
  run_id?: number | null;
}

/** What the thread needs of a run. */
export interface RunBrief {
  id: number;
  worker_id: number;
  message_id: number;
  status: string;
  tool_calls: { tool: string; is_error: boolean; summary: string }[];
  error: string | null;
  error_message: string | null;
}

export type ThreadItem =
  | { kind: 'user'; key: string; id: number; text: string }
  | {
      kind: 'reply';
      key: string;
      workerId: number | null;
      runId: number | null;
      text: string;
      status: string | null;
      tools: ToolCard[];
      streaming: boolean;
      reconnecting: boolean;
      error: string | null;
      /** The message this replies to (for regenerate). */
      prompt: string | null;
    };

const ENDED_BY_LIVE = (runStatus: string) => runStatus === 'queued' || runStatus === 'running';

/**
 * The transcript (module header). `messages` oldest first; `runs` any order; only runs of workers `inView` get a
 * reply slot (a reply not stored yet shows what its live run wrote).
 */
export function buildThread(
  messages: HistoryMessage[],
  runs: RunBrief[],
  live: LiveState,
  inView: (workerId: number) => boolean,
): ThreadItem[] {
  const byMessage = new Map<number, RunBrief[]>();
  for (const r of [...runs].sort((x, y) => x.id - y.id)) {
    if (!inView(r.worker_id)) continue;
    byMessage.set(r.message_id, [...(byMessage.get(r.message_id) ?? []), r]);
  }
  const replyOf = new Map<number, HistoryMessage>();
  for (const m of messages) if (m.role === 'assistant' && m.run_id) replyOf.set(m.run_id, m);
  const shown = new Set<number>();
  const out: ThreadItem[] = [];
  for (const m of messages) {
    if (m.role === 'user') {
      out.push({ kind: 'user', key: `m${m.id}`, id: m.id, text: m.content });
      for (const r of byMessage.get(m.id) ?? []) {
        shown.add(r.id);
        const stored = replyOf.get(r.id);
        const lv = live[r.id];
        const status = lv && (lv.streaming || ENDED_BY_LIVE(r.status)) ? lv.status : r.status;
        out.push({
          kind: 'reply',
          key: `r${r.id}`,
          workerId: r.worker_id,
          runId: r.id,
          text: stored?.content ?? lv?.text ?? '',
          status,
          tools: lv?.tools.length ? lv.tools : toCards(r.tool_calls),
          streaming: !!lv?.streaming,
          reconnecting: !!lv?.reconnecting,
          error: (lv && !lv.streaming ? lv.error : undefined) ?? r.error_message ?? r.error ?? null,
          prompt: m.content,
        });
      }
    } else if (!(m.run_id && shown.has(m.run_id))) {
      const prompt = [...out].reverse().find((i) => i.kind === 'user');
      out.push({
        kind: 'reply',
        key: `m${m.id}`,
        workerId: m.worker_id,
        runId: m.run_id ?? null,
        text: m.content,
        status: null,
        tools: [],
        streaming: false,
        reconnecting: false,
        error: null,
        prompt: prompt?.kind === 'user' ? prompt.text : null,
      });
    }
  }
  return out;
}
