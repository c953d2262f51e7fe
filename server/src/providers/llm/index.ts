/**
 * Choose the LLM vendor from configuration (`LLM_PROVIDER`, `LLM_BASE_URL`). Which key a call uses is
 * the accounts area's decision (modules/accounts/llm-keys.ts).
 */
import type { Config } from '../../config.ts';
import { createAnthropicProvider } from './anthropic.ts';
import { createOpenAiProvider } from './openai.ts';
import type { LlmProvider } from './llm.ts';

export * from './llm.ts';

export function createLlmProvider(config: Pick<Config, 'llmProvider' | 'llmBaseUrl'>): LlmProvider {
  return config.llmProvider === 'openai'
    ? createOpenAiProvider({ baseUrl: config.llmBaseUrl })
    : createAnthropicProvider({ baseUrl: config.llmBaseUrl });
}
