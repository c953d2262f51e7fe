/**
 * Account settings (specification: Account and usage → Account settings): `llm_key` stored sealed
 * (AES-256-GCM), shown only as a masked prefix; `upload_transcripts` read by the CLI.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { Actor } from '../../http/auth.ts';
import { BadRequest } from '../../http/errors.ts';
import { maskSecret, type Sealer } from '../../secrets/crypto.ts';

export interface SettingsView {
  llm_key: string | null;
  llm_key_set: boolean;
  upload_transcripts: boolean;
}

export function createSettingsService(deps: { db: Kysely<DB>; sealer: Sealer }) {
  const { db, sealer } = deps;

  async function view(userId: number): Promise<SettingsView> {
    const row = await db
      .selectFrom('account_settings')
      .select(['llm_key_enc', 'upload_transcripts'])
      .where('user_id', '=', userId)
      .executeTakeFirst();
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
    /** GET /account/settings. */
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
      await db
        .insertInto('account_settings')
        .values({
          user_id: actor.id,
          llm_key_enc: patch.llm_key_enc ?? null,
          upload_transcripts: patch.upload_transcripts ?? false,
        })
        .onConflict((oc) => oc.column('user_id').doUpdateSet({ ...patch, updated_at: new Date() }))
        .execute();
      return view(actor.id);
    },

    /** The caller's own LLM key in plain text (for provider calls only; never answered). */
    async llmKey(userId: number): Promise<string | undefined> {
      const row = await db
        .selectFrom('account_settings')
        .select('llm_key_enc')
        .where('user_id', '=', userId)
        .executeTakeFirst();
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
