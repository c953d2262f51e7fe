/**
 * The chat transcript as a pure reducer over the stream's events, so the rules are testable without a
 * browser: `text_delta {delta}` grows the reply being written, `tool_result {tool, is_error}` adds a tool line,
 * `done {message_id, usage, error}` closes the reply.
 */
export interface ChatLine {
  key: string;
  role: 'user' | 'assistant' | 'tool';
  text: string;
  streaming?: boolean;
  error?: string;
}

export interface Usage {
  input_tokens?: number;
  output_tokens?: number;
}

export interface ChatState {
  lines: ChatLine[];
  usage: Usage | null;
}

export type ChatAction =
  | { type: 'history'; lines: ChatLine[] }
  | { type: 'send'; text: string; key: string }
  | { type: 'event'; event: string; data: any }
  | { type: 'failed'; message: string };

export const emptyChat: ChatState = { lines: [], usage: null };

/** The last line when it is the assistant's reply being streamed. */
function streamingIndex(lines: ChatLine[]): number {
  const i = lines.length - 1;
  return i >= 0 && lines[i].role === 'assistant' && lines[i].streaming ? i : -1;
}

export function chatReducer(state: ChatState, action: ChatAction): ChatState {
  switch (action.type) {
    case 'history':
      return { ...state, lines: action.lines };
    case 'send':
      return {
        ...state,
        lines: [
          ...state.lines,
          { key: `u-${action.key}`, role: 'user', text: action.text },
          { key: `a-${action.key}`, role: 'assistant', text: '', streaming: true },
        ],
      };
    case 'failed': {
      const i = streamingIndex(state.lines);
      if (i < 0) return state;
      const lines = state.lines.slice();
      lines[i] = { ...lines[i], streaming: false, error: action.message };
      return { ...state, lines };
    }
    case 'event': {
      const i = streamingIndex(state.lines);
      if (i < 0) return state;
      const lines = state.lines.slice();
      const reply = lines[i];
      if (action.event === 'text_delta' && typeof action.data?.delta === 'string') {
        lines[i] = { ...reply, text: reply.text + action.data.delta };
        return { ...state, lines };
      }
      if (action.event === 'tool_result') {
        const tool = String(action.data?.tool ?? 'tool');
        const line: ChatLine = {
          key: `${reply.key}-t${lines.length}`,
          role: 'tool',
          text: tool,
          error: action.data?.is_error ? 'error' : undefined,
        };
        lines.splice(i, 0, line);
        return { ...state, lines };
      }
      if (action.event === 'done') {
        lines[i] = {
          ...reply,
          streaming: false,
          error: action.data?.error ? String(action.data.error) : undefined,
        };
        return { lines, usage: action.data?.usage ?? state.usage };
      }
      return state;
    }
  }
}
