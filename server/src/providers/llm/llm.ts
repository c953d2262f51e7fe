/**
 * The LLM provider interface (adapters speak each vendor's wire protocol at a configurable base URL): one
 * shape for the Anthropic Messages API and OpenAI-compatible chat completions, with streaming text, tool use
 * and token usage.
 * Messages follow the Messages API's content-block model; vendors translate.
 */

export type LlmContent =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean }
  /** An image for vision calls: base64 data of `media_type` (image/jpeg, image/png, …). */
  | { type: 'image'; media_type: string; data: string };

export interface LlmMessage {
  role: 'user' | 'assistant';
  content: string | LlmContent[];
}

export interface LlmTool {
  name: string;
  description: string;
  /** JSON Schema of the tool's input object. */
  input_schema: Record<string, unknown>;
}

export interface LlmRequest {
  model: string;
  system?: string;
  messages: LlmMessage[];
  tools?: LlmTool[];
  /** Upper bound of output tokens for this call. */
  maxTokens: number;
  /** 0–1; omitted: the vendor's default. */
  temperature?: number;
  /** The key to call with (the user's own, or the platform key). Never logged. */
  apiKey: string;
  signal?: AbortSignal;
}

/** Token counts of one call. `cache_tokens` = cache reads + cache writes where the vendor reports them. */
export interface LlmUsage {
  input_tokens: number;
  output_tokens: number;
  cache_tokens: number;
}

export interface LlmResponse {
  /** Text and tool_use blocks in order. */
  content: Array<Extract<LlmContent, { type: 'text' } | { type: 'tool_use' }>>;
  /** `end_turn`, `tool_use`, `max_tokens`, `stop_sequence`, or the vendor's own value. */
  stop_reason: string;
  usage: LlmUsage;
  model: string;
}

export type LlmStreamEvent = { type: 'text_delta'; delta: string };

/** Why a call failed; the worker runtime's cascade escalates on some of these. */
export type LlmErrorKind =
  'auth' | 'rate_limit' | 'overloaded' | 'invalid_request' | 'network' | 'timeout' | 'server' | 'aborted';

export class LlmError extends Error {
  constructor(
    readonly kind: LlmErrorKind,
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface LlmProvider {
  readonly vendor: 'anthropic' | 'openai';
  /**
   * One model call. With `onEvent` the answer is streamed and text deltas are delivered as they arrive;
   * the resolved value is the whole message either way.
   * @throws LlmError with its kind; never includes the key in the message.
   */
  complete(req: LlmRequest, onEvent?: (e: LlmStreamEvent) => void): Promise<LlmResponse>;
  /**
   * Start loading the vendor's SDK in the background when it is not loaded yet, so the first call does not wait
   * for it (a call is about to be made). Returns at once; never throws (a failed load fails the call as before).
   */
  warm?(): void;
}

/** Join the text blocks of an answer. */
export const textOf = (r: Pick<LlmResponse, 'content'>): string =>
  r.content
    .filter((b): b is { type: 'text'; text: string } => b.type === 'text')
    .map((b) => b.text)
    .join('');

/** Map an HTTP status (or its absence) to an error kind. */
export function kindOfStatus(status: number | undefined): LlmErrorKind {
  if (status === undefined) return 'network';
  if (status === 401 || status === 403) return 'auth';
  if (status === 429) return 'rate_limit';
  if (status === 529 || status === 503) return 'overloaded';
  if (status === 408 || status === 504) return 'timeout';
  if (status >= 500) return 'server';
  return 'invalid_request';
}
