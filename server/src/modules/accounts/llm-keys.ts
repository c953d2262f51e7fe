/**
 * Which LLM key a call uses (docs/api.md, The main resources): the
 * user's own key (stored sealed in account settings), or the platform key from the secret store for
 * trial-mode owners and platform features such as the help assistant. The key is never answered or logged.
 */
import { BadRequest, Upstream } from '../../http/errors.ts';
import type { SecretStore } from '../../secrets/secret-store.ts';
import type { SettingsService } from './settings.service.ts';
import type { Owner } from '../usage/usage.rules.ts';

export interface ResolvedKey {
  key: string;
  source: 'own' | 'platform';
}

export interface LlmKeys {
  /** The platform key. @throws Upstream 503 `llm_unavailable` when none is configured. */
  platform(): Promise<ResolvedKey>;
  /**
   * The key for a call made for `userId`: their own key when set; otherwise the platform key when
   * `allowPlatform` (trial-mode owners); with the user's plan and role (`owner`, a free user when unknown), read
   * with their key in one statement. @throws BadRequest `llm_key_required` when neither applies;
   * Upstream 503 `llm_unavailable` when the platform key is needed but missing.
   */
  forUser(userId: number, opts?: { allowPlatform?: boolean }): Promise<ResolvedKey & { owner: Owner }>;
}

/**
 * The key resolver over the caller's own key (account settings) and the platform key (secret store
 * `PLATFORM_LLM_KEY`).
 */
export function createLlmKeys(deps: {
  settings: Pick<SettingsService, 'llmKeyAndPlan'>;
  secrets: SecretStore;
}): LlmKeys {
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
      const { key: own, owner } = await deps.settings.llmKeyAndPlan(userId);
      if (own) return { key: own, source: 'own', owner };
      if (opts.allowPlatform) return { ...(await platform()), owner };
      throw new BadRequest('llm_key_required', 'Add your own LLM key in account settings to use this feature.');
    },
  };
}
