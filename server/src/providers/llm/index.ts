/**
 * Choose the LLM vendor from configuration (`LLM_PROVIDER`, `LLM_BASE_URL`) and resolve which key a
 * call uses: the caller's own `llm_key` (decrypted), or the platform key (`PLATFORM_LLM_KEY` from the
 * secret store) for trial-mode owners and platform features such as the help assistant.
 */
import type { Config } from '../../config.ts';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { Sealer } from '../../secrets/crypto.ts';
import type { SecretStore } from '../../secrets/secret-store.ts';
import { BadRequest, Upstream } from '../../http/errors.ts';
import { createAnthropicProvider } from './anthropic.ts';
import { createOpenAiProvider } from './openai.ts';
import type { LlmProvider } from './llm.ts';

export * from './llm.ts';

export function createLlmProvider(config: Pick<Config, 'llmProvider' | 'llmBaseUrl'>): LlmProvider {
  return config.llmProvider === 'openai'
    ? createOpenAiProvider({ baseUrl: config.llmBaseUrl })
    : createAnthropicProvider({ baseUrl: config.llmBaseUrl });
}

export interface ResolvedKey {
  key: string;
  source: 'own' | 'platform';
}

export interface LlmKeys {
  /** The platform key. @throws Upstream 503 `llm_unavailable` when none is configured. */
  platform(): Promise<ResolvedKey>;
  /**
   * The key for a call made for `userId`: their own key when set; otherwise the platform key when
   * `allowPlatform` (trial-mode owners). @throws BadRequest `llm_key_required` when neither applies;
   * Upstream 503 `llm_unavailable` when the platform key is needed but missing.
   */
  forUser(userId: number, opts?: { allowPlatform?: boolean }): Promise<ResolvedKey>;
}

export function createLlmKeys(deps: { db: Kysely<DB>; sealer: Sealer; secrets: SecretStore }): LlmKeys {
  const platform = async (): Promise<ResolvedKey> => {
    const key = await deps.secrets.get('PLATFORM_LLM_KEY');
    if (!key)
      throw new Upstream(
        503,
        'llm_unavailable',
        'No platform LLM key is configured; an administrator can set PLATFORM_LLM_KEY.',
      );
    return { key, source: 'platform' };
  };
  return {
    platform,
    async forUser(userId, opts = {}) {
      const row = await deps.db
        .selectFrom('account_settings')
        .select('llm_key_enc')
        .where('user_id', '=', userId)
        .executeTakeFirst();
      if (row?.llm_key_enc) {
        try {
          return { key: deps.sealer.open(row.llm_key_enc), source: 'own' };
        } catch {
          /* unreadable: fall through */
        }
      }
      if (opts.allowPlatform) return platform();
      throw new BadRequest('llm_key_required', 'Add your own LLM key in account settings to use this feature.');
    },
  };
}
