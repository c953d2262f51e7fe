/**
 * The one mapping of a failed model call to an HTTP answer: any `LlmError` becomes 502 `llm_error` with the
 * failure's `kind` (auth, rate_limit, overloaded, invalid_request, network, timeout, server, aborted) and a
 * sentence of the caller's choosing; other errors pass through unchanged. The provider's own message (which
 * may echo request details) never reaches the answer.
 */
import { LlmError } from '../providers/llm/llm.ts';
import { Upstream } from './errors.ts';

/** @returns the error to throw for `err`: an Upstream 502 for an LlmError, else `err` itself. */
export function llmFailure(err: unknown, message: string): unknown {
  if (err instanceof LlmError) return new Upstream(502, 'llm_error', message, { kind: err.kind });
  return err;
}
