import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLlmStandIn } from '../../../test/standins/llm.ts';
import { createAnthropicProvider } from './anthropic.ts';
import { createOpenAiProvider } from './openai.ts';
import { LlmError, textOf, type LlmProvider, type LlmRequest } from './llm.ts';

let s: Awaited<ReturnType<typeof startLlmStandIn>>;
beforeAll(async () => {
  s = await startLlmStandIn();
});
afterAll(async () => s?.close());

const tools = [
  {
    name: 'create_issue',
    description: 'Create an issue',
    input_schema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
  },
];
const req = (over: Partial<LlmRequest> = {}): LlmRequest => ({
  model: 'm-1',
  system: 'be brief',
  messages: [{ role: 'user', content: 'hello' }],
  maxTokens: 100,
  apiKey: 'sk-test-key-123',
  tools,
  ...over,
});

for (const vendor of ['anthropic', 'openai'] as const) {
  describe(`${vendor} vendor against its wire protocol`, () => {
    const provider = (): LlmProvider =>
      vendor === 'anthropic'
        ? createAnthropicProvider({ baseUrl: s.anthropicUrl, maxRetries: 0 })
        : createOpenAiProvider({ baseUrl: s.openaiUrl, maxRetries: 0 });

    it('streams text deltas, returns tool_use blocks with parsed input and usage', async () => {
      s.enqueue({
        content: [
          { type: 'text', text: 'Creating it now.' },
          { type: 'tool_use', name: 'create_issue', input: { title: 'Fix login', n: [1, 2] } },
        ],
        usage: { input_tokens: 120, output_tokens: 30 },
      });
      const deltas: string[] = [];
      const r = await provider().complete(req(), (e) => deltas.push(e.delta));
      expect(deltas.join('')).toBe('Creating it now.');
      expect(deltas.length).toBeGreaterThan(1);
      expect(r.stop_reason).toBe('tool_use');
      expect(r.content[1]).toMatchObject({
        type: 'tool_use',
        name: 'create_issue',
        input: { title: 'Fix login', n: [1, 2] },
      });
      expect(r.usage).toMatchObject({ input_tokens: 120, output_tokens: 30 });
      const last = s.requests[s.requests.length - 1];
      if (vendor === 'anthropic') {
        expect(last.headers['x-api-key'] ?? last.headers.authorization).toMatch(/^(Bearer )?sk-test-key-123$/);
        expect(last.body.system).toBe('be brief');
        expect(last.body.tools[0].name).toBe('create_issue');
      } else {
        expect(last.headers.authorization).toBe('Bearer sk-test-key-123');
        expect(last.body.messages[0]).toEqual({ role: 'system', content: 'be brief' });
        expect(last.body.tools[0].function.name).toBe('create_issue');
      }
    });

    it('sends tool results back in the vendor form and answers without streaming', async () => {
      s.enqueue({ content: [{ type: 'text', text: 'Done: issue 7.' }] });
      const r = await provider().complete(
        req({
          temperature: 0,
          messages: [
            { role: 'user', content: 'make an issue' },
            {
              role: 'assistant',
              content: [{ type: 'tool_use', id: 'call_1', name: 'create_issue', input: { title: 'x' } }],
            },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: '{"issue_id":7}' }] },
          ],
        }),
      );
      expect(textOf(r)).toBe('Done: issue 7.');
      expect(r.stop_reason).toBe('end_turn');
      const last = s.requests[s.requests.length - 1];
      expect(last.body.temperature).toBe(0);
      if (vendor === 'anthropic')
        expect(last.body.messages[2].content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'call_1' });
      else
        expect(last.body.messages.find((m: any) => m.role === 'tool')).toMatchObject({
          tool_call_id: 'call_1',
          content: '{"issue_id":7}',
        });
    });

    it('classifies failures: overloaded, rate limit, auth, unreachable', async () => {
      s.enqueue({ status: vendor === 'anthropic' ? 529 : 503, errorType: 'overloaded_error' });
      await expect(provider().complete(req())).rejects.toMatchObject({ kind: 'overloaded' });
      s.enqueue({ status: 429 });
      await expect(provider().complete(req())).rejects.toMatchObject({ kind: 'rate_limit' });
      s.enqueue({ status: 401 });
      const err = await provider()
        .complete(req())
        .catch((e) => e);
      expect(err).toBeInstanceOf(LlmError);
      expect(err.kind).toBe('auth');
      expect(err.message).not.toContain('sk-test-key-123');
      const down =
        vendor === 'anthropic'
          ? createAnthropicProvider({ baseUrl: 'http://127.0.0.1:9', maxRetries: 0 })
          : createOpenAiProvider({ baseUrl: 'http://127.0.0.1:9/v1', maxRetries: 0 });
      await expect(down.complete(req())).rejects.toMatchObject({ kind: 'network' });
    });

    it('an aborted call rejects with kind aborted', async () => {
      s.enqueue({ content: [{ type: 'text', text: 'slow' }], delayMs: 2000 });
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 100);
      await expect(provider().complete(req({ signal: ac.signal }), () => {})).rejects.toMatchObject({
        kind: 'aborted',
      });
    });
  });
}
