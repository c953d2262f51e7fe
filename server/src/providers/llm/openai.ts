/**
 * OpenAI-compatible chat completions vendor (`LLM_PROVIDER=openai`, e.g. a local model server at
 * `LLM_BASE_URL`), through the vendor's SDK. Translates the content-block messages to chat messages
 * with `tool_calls` / `tool` roles, and streamed tool-call fragments back to whole tool_use blocks.
 */
import type OpenAI from 'openai';
import { clientCache } from './client-cache.ts';
import { kindOfStatus, LlmError, type LlmContent, type LlmProvider, type LlmRequest, type LlmResponse } from './llm.ts';

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** Content-block messages → chat messages. */
export function toChatMessages(req: Pick<LlmRequest, 'system' | 'messages'>): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (req.system) out.push({ role: 'system', content: req.system });
  for (const m of req.messages) {
    if (typeof m.content === 'string') {
      out.push({ role: m.role, content: m.content } as ChatMessage);
      continue;
    }
    if (m.role === 'assistant') {
      const text = m.content
        .filter((b) => b.type === 'text')
        .map((b) => (b as { text: string }).text)
        .join('');
      const calls = m.content.filter((b): b is Extract<LlmContent, { type: 'tool_use' }> => b.type === 'tool_use');
      out.push({
        role: 'assistant',
        content: text || null,
        ...(calls.length
          ? {
              tool_calls: calls.map((c) => ({
                id: c.id,
                type: 'function' as const,
                function: { name: c.name, arguments: JSON.stringify(c.input) },
              })),
            }
          : {}),
      });
      continue;
    }
    const parts: OpenAI.Chat.Completions.ChatCompletionContentPart[] = [];
    for (const b of m.content) {
      if (b.type === 'tool_result')
        out.push({
          role: 'tool',
          tool_call_id: b.tool_use_id,
          content: b.is_error ? `Error: ${b.content}` : b.content,
        });
      else if (b.type === 'text') parts.push({ type: 'text', text: b.text });
      else if (b.type === 'image')
        parts.push({ type: 'image_url', image_url: { url: `data:${b.media_type};base64,${b.data}` } });
    }
    if (parts.length)
      out.push({ role: 'user', content: parts.length === 1 && parts[0].type === 'text' ? parts[0].text : parts });
  }
  return out;
}

const stopReason = (r: string | null | undefined) =>
  r === 'tool_calls' ? 'tool_use' : r === 'length' ? 'max_tokens' : r === 'stop' || !r ? 'end_turn' : r;

const parseArgs = (s: string): Record<string, unknown> => {
  try {
    const v = JSON.parse(s || '{}');
    return v && typeof v === 'object' && !Array.isArray(v) ? v : { value: v };
  } catch {
    return { _raw: s };
  }
};

function toError(Sdk: typeof OpenAI, err: unknown, signal?: AbortSignal): LlmError {
  if (signal?.aborted) return new LlmError('aborted', 'The model call was cancelled.');
  if (err instanceof Sdk.APIConnectionTimeoutError)
    return new LlmError('timeout', 'The model provider did not answer in time.');
  if (err instanceof Sdk.APIUserAbortError) return new LlmError('aborted', 'The model call was cancelled.');
  if (err instanceof Sdk.APIConnectionError) return new LlmError('network', 'The model provider cannot be reached.');
  if (err instanceof Sdk.APIError)
    return new LlmError(
      kindOfStatus(err.status),
      `The model provider answered ${err.status ?? 'an error'}.`,
      err.status,
    );
  return new LlmError('server', 'The model call failed.');
}

export function createOpenAiProvider(opts: { baseUrl: string; timeoutMs?: number; maxRetries?: number }): LlmProvider {
  // The SDK is loaded on the first model call, not at start.
  // `warm` starts that load earlier, when a call is known to come (the model gateway's `billing`).
  let sdk: Promise<typeof OpenAI> | undefined;
  const loadSdk = () => (sdk ??= import('openai').then((m) => m.default));
  let client: ((apiKey: string) => OpenAI) | undefined;
  return {
    vendor: 'openai',
    warm() {
      loadSdk().catch(() => {});
    },
    async complete(req, onEvent) {
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
      const base = {
        model: req.model,
        messages: toChatMessages(req),
        max_tokens: req.maxTokens,
        ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
        ...(req.tools?.length
          ? {
              tools: req.tools.map((t) => ({
                type: 'function' as const,
                function: { name: t.name, description: t.description, parameters: t.input_schema },
              })),
            }
          : {}),
      };
      try {
        if (!onEvent) {
          const r = await client(req.apiKey).chat.completions.create(
            { ...base, stream: false },
            { signal: req.signal },
          );
          const choice = r.choices[0];
          const content: LlmResponse['content'] = [];
          if (choice?.message?.content) content.push({ type: 'text', text: choice.message.content });
          for (const c of choice?.message?.tool_calls ?? []) {
            if (c.type === 'function')
              content.push({
                type: 'tool_use',
                id: c.id,
                name: c.function.name,
                input: parseArgs(c.function.arguments),
              });
          }
          return {
            content,
            stop_reason: stopReason(choice?.finish_reason),
            model: r.model ?? req.model,
            usage: {
              input_tokens: r.usage?.prompt_tokens ?? 0,
              output_tokens: r.usage?.completion_tokens ?? 0,
              cache_tokens: r.usage?.prompt_tokens_details?.cached_tokens ?? 0,
            },
          };
        }
        const stream = await client(req.apiKey).chat.completions.create(
          { ...base, stream: true, stream_options: { include_usage: true } },
          { signal: req.signal },
        );
        let text = '';
        let finish: string | null = null;
        let model = req.model;
        const usage = { input_tokens: 0, output_tokens: 0, cache_tokens: 0 };
        const calls = new Map<number, { id: string; name: string; args: string }>();
        for await (const chunk of stream) {
          if (chunk.model) model = chunk.model;
          if (chunk.usage) {
            usage.input_tokens = chunk.usage.prompt_tokens ?? 0;
            usage.output_tokens = chunk.usage.completion_tokens ?? 0;
            usage.cache_tokens = chunk.usage.prompt_tokens_details?.cached_tokens ?? 0;
          }
          const choice = chunk.choices?.[0];
          if (!choice) continue;
          if (choice.delta?.content) {
            text += choice.delta.content;
            onEvent({ type: 'text_delta', delta: choice.delta.content });
          }
          for (const tc of choice.delta?.tool_calls ?? []) {
            const cur = calls.get(tc.index) ?? { id: '', name: '', args: '' };
            if (tc.id) cur.id = tc.id;
            if (tc.function?.name) cur.name += tc.function.name;
            if (tc.function?.arguments) cur.args += tc.function.arguments;
            calls.set(tc.index, cur);
          }
          if (choice.finish_reason) finish = choice.finish_reason;
        }
        const content: LlmResponse['content'] = [];
        if (text) content.push({ type: 'text', text });
        for (const [i, c] of [...calls.entries()].sort((a, b) => a[0] - b[0]))
          content.push({ type: 'tool_use', id: c.id || `call_${i}`, name: c.name, input: parseArgs(c.args) });
        return { content, stop_reason: stopReason(finish), model, usage };
      } catch (err) {
        throw toError(Sdk, err, req.signal);
      }
    },
  };
}
