/**
 * Account settings (docs/api.md, The main resources): `llm_key` stored sealed
 * (AES-256-GCM), shown only as a masked prefix; `upload_transcripts` read by the CLI.
 */
import type { Static } from 'typebox';
import type { Actor } from '../../http/auth.ts';
import { BadRequest } from '../../http/errors.ts';
import { maskSecret, type Sealer } from '../../secrets/crypto.ts';
import type { AccountsRepo } from './accounts.repo.ts';
import type * as S from './accounts.schemas.ts';

/** The settings as `GET /account/settings` shows them: the key masked, never in plain text. */
export type SettingsView = Static<typeof S.Settings>;

export interface SettingsDeps {
  repo: Pick<AccountsRepo, 'settingsOf' | 'upsertSettings'>;
  /** Seals and opens the stored LLM key (AES-256-GCM). */
  sealer: Sealer;
}

export function createSettingsService(deps: SettingsDeps) {
  const { repo, sealer } = deps;

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
      const row = await repo.settingsOf(userId);
      if (!row?.llm_key_enc) return undefined;
      try {
        return sealer.open(row.llm_key_enc);
      } catch {
        return undefined;
      }
    },
  };
}
export type SettingsService = ReturnType<typeof createSettingsService>;
