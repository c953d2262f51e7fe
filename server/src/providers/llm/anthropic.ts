/**
 * Anthropic Messages API vendor (`LLM_PROVIDER=anthropic`, base `LLM_BASE_URL`), through the vendor's SDK.
 * Streaming uses the SDK's message stream; usage counts cache reads and writes as `cache_tokens`.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { clientCache } from './client-cache.ts';
import { kindOfStatus, LlmError, type LlmContent, type LlmProvider, type LlmRequest, type LlmResponse } from './llm.ts';

function toParams(req: LlmRequest) {
  const content = (c: string | LlmContent[]) =>
    typeof c === 'string'
      ? c
      : c.map((b) => {
          if (b.type === 'image')
            return {
              type: 'image' as const,
              source: { type: 'base64' as const, media_type: b.media_type as 'image/png', data: b.data },
            };
          if (b.type === 'tool_result')
            return {
              type: 'tool_result' as const,
              tool_use_id: b.tool_use_id,
              content: b.content,
              ...(b.is_error ? { is_error: true } : {}),
            };
          return b;
        });
  return {
    model: req.model,
    max_tokens: req.maxTokens,
    ...(req.system ? { system: req.system } : {}),
    ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
    ...(req.tools?.length
      ? {
          tools: req.tools.map((t) => ({
            name: t.name,
            description: t.description,
            input_schema: t.input_schema as Anthropic.Tool.InputSchema,
          })),
        }
      : {}),
    messages: req.messages.map((m) => ({ role: m.role, content: content(m.content) })) as Anthropic.MessageParam[],
  };
}

function toResponse(msg: Anthropic.Message): LlmResponse {
  const content: LlmResponse['content'] = [];
  for (const b of msg.content) {
    if (b.type === 'text') content.push({ type: 'text', text: b.text });
    else if (b.type === 'tool_use')
      content.push({ type: 'tool_use', id: b.id, name: b.name, input: (b.input ?? {}) as Record<string, unknown> });
  }
  const u = msg.usage as Anthropic.Usage;
  return {
    content,
    stop_reason: msg.stop_reason ?? 'end_turn',
    model: msg.model,
    usage: {
      input_tokens: u?.input_tokens ?? 0,
      output_tokens: u?.output_tokens ?? 0,
      cache_tokens: (u?.cache_read_input_tokens ?? 0) + (u?.cache_creation_input_tokens ?? 0),
    },
  };
}

function toError(Sdk: typeof Anthropic, err: unknown, signal?: AbortSignal): LlmError {
  if (signal?.aborted) return new LlmError('aborted', 'The model call was cancelled.');
  if (err instanceof Sdk.APIConnectionTimeoutError)
    return new LlmError('timeout', 'The model provider did not answer in time.');
  if (err instanceof Sdk.APIUserAbortError) return new LlmError('aborted', 'The model call was cancelled.');
  if (err instanceof Sdk.APIConnectionError) return new LlmError('network', 'The model provider cannot be reached.');
  if (err instanceof Sdk.APIError) {
    const kind = kindOfStatus(err.status);
    const detail = (err.error as { error?: { message?: string } } | undefined)?.error?.message;
    return new LlmError(
      kind,
      `The model provider answered ${err.status ?? 'an error'}${detail ? `: ${detail.slice(0, 200)}` : ''}.`,
      err.status,
    );
  }
  return new LlmError('server', 'The model call failed.');
}

export function createAnthropicProvider(opts: {
  baseUrl: string;
  timeoutMs?: number;
  maxRetries?: number;
}): LlmProvider {
  // The SDK is loaded on the first model call, not at start (its ~360 modules took ~0.2 s and ~12 MiB).
  // `warm` starts that load earlier, when a call is known to come (the model gateway's `billing`).
  let sdk: Promise<typeof Anthropic> | undefined;
  const loadSdk = () => (sdk ??= import('@anthropic-ai/sdk').then((m) => m.default));
  let client: ((apiKey: string) => Anthropic) | undefined;
  return {
    vendor: 'anthropic',
    warm() {
      loadSdk().catch(() => {});
    },
    async complete(req, onEvent) {
      const params = toParams(req);
      const Sdk = await loadSdk();
      client ??= clientCache(
        (apiKey) =>
          new Sdk({
            apiKey,
            baseURL: opts.baseUrl,
            timeout: opts.timeoutMs ?? 120_000,
            maxRetries: opts.maxRetries ?? 1,
          }),
      );
      try {
        if (!onEvent) {
          const msg = await client(req.apiKey).messages.create({ ...params, stream: false }, { signal: req.signal });
          return toResponse(msg);
        }
        const stream = client(req.apiKey).messages.stream(params, { signal: req.signal });
        stream.on('text', (delta) => onEvent({ type: 'text_delta', delta }));
        return toResponse(await stream.finalMessage());
      } catch (err) {
        throw toError(Sdk, err, req.signal);
      }
    },
  };
}
