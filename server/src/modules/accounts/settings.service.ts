/**
 * Account settings (docs/api.md, The main resources): `llm_key` stored sealed
 * (AES-256-GCM), shown only as a masked prefix; `upload_transcripts` read by the CLI.
 */
import type { Static } from 'typebox';
import type { Actor } from '../../http/auth.ts';
import { BadRequest } from '../../http/errors.ts';
import { maskSecret, type Sealer } from '../../secrets/crypto.ts';
import type { AccountsRepo } from './accounts.repo.ts';
import type { Owner } from '../usage/usage.rules.ts';
import type * as S from './accounts.schemas.ts';

/** The settings as `GET /account/settings` shows them: the key masked, never in plain text. */
export type SettingsView = Static<typeof S.Settings>;

export interface SettingsDeps {
  repo: Pick<AccountsRepo, 'settingsOf' | 'upsertSettings' | 'keyAndPlanOf'>;
  /** Seals and opens the stored LLM key (AES-256-GCM). */
  sealer: Sealer;
}

export function createSettingsService(deps: SettingsDeps) {
  const { repo, sealer } = deps;

  /** A stored key opened, or undefined when none is stored or it cannot be opened (another encryption key). */
  const openKey = (sealed: string | null | undefined): string | undefined => {
    if (!sealed) return undefined;
    try {
      return sealer.open(sealed);
    } catch {
      return undefined;
    }
  };

  async function view(userId: number): Promise<SettingsView> {
    const row = await repo.settingsOf(userId);
    let masked: string | null = null;
    if (row?.llm_key_enc) {
      try {
        masked = maskSecret(sealer.open(row.llm_key_enc));
      } catch {
        masked = '(unreadable: set the key again)';
      }
    }
    return { llm_key: masked, llm_key_set: !!row?.llm_key_enc, upload_transcripts: row?.upload_transcripts ?? false };
  }

  return {
    /** GET /account/settings → `{llm_key (masked or null), llm_key_set, upload_transcripts}`. */
    get: (actor: Actor) => view(actor.id),

    /**
     * PUT /account/settings `{llm_key?, upload_transcripts?}`: a string key is stored sealed; `''` or
     * `null` removes it; an absent field stays as it is. 400 `invalid_llm_key` for a key with spaces or
     * under 8 characters. @returns the settings view (masked).
     */
    async update(
      actor: Actor,
      input: { llm_key?: string | null; upload_transcripts?: boolean },
    ): Promise<SettingsView> {
      const patch: { llm_key_enc?: string | null; upload_transcripts?: boolean } = {};
      if (input.llm_key !== undefined) {
        const key = input.llm_key?.trim() ?? '';
        if (key && (key.length < 8 || /\s/.test(key)))
          throw new BadRequest('invalid_llm_key', 'The LLM key must be at least 8 characters and contain no spaces.');
        patch.llm_key_enc = key ? sealer.seal(key) : null;
      }
      if (input.upload_transcripts !== undefined) patch.upload_transcripts = input.upload_transcripts;
      await repo.upsertSettings(actor.id, patch);
      return view(actor.id);
    },

    /** The caller's own LLM key in plain text (for provider calls only; never answered). */
    async llmKey(userId: number): Promise<string | undefined> {
      return openKey((await repo.settingsOf(userId))?.llm_key_enc);
    },

    /**
     * The user's own LLM key in plain text (undefined when none is stored or it cannot be opened) with their plan and
     * role (an unknown user reads as a free user, as `AccountsRepo.planOf`), in one read: a model call's billing.
     * The key is for provider calls only; never answered.
     */
    async llmKeyAndPlan(userId: number): Promise<{ key: string | undefined; owner: Owner }> {
      const { llm_key_enc, owner } = await repo.keyAndPlanOf(userId);
      return { key: openKey(llm_key_enc), owner };
    },
  };
}
export type SettingsService = ReturnType<typeof createSettingsService>;
