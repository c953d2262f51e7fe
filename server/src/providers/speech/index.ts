/** The speech provider chosen from configuration: the OpenAI-compatible server of `SPEECH_URL`, or none. */
import { type Config, DEFAULT_SPEECH_MAX_FILE_BYTES } from '../../config.ts';
import type { Media } from '../../lib/media.ts';
import { createOpenAiSpeech } from './openai.ts';
import { withPieces } from './pieces.ts';
import { type SpeechProvider, SpeechUnavailable } from './speech.ts';

export * from './speech.ts';

/**
 * Without `SPEECH_URL` the provider is unavailable: every call throws SpeechUnavailable. With `media`, files
 * above `speechMaxFileBytes` (default 24 MiB) are sent in pieces (pieces.ts); without it, whole.
 */
export function createSpeech(
  config: Pick<Config, 'speechUrl' | 'speechModel' | 'speechKey'> & Partial<Pick<Config, 'speechMaxFileBytes'>>,
  media?: Media,
): SpeechProvider {
  if (config.speechUrl) {
    const base = createOpenAiSpeech({ baseUrl: config.speechUrl, model: config.speechModel, apiKey: config.speechKey });
    return media
      ? withPieces(base, media, { maxFileBytes: config.speechMaxFileBytes ?? DEFAULT_SPEECH_MAX_FILE_BYTES })
      : base;
  }
  return {
    available: false,
    async transcribe() {
      throw new SpeechUnavailable();
    },
  };
}
