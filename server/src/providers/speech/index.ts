/** The speech provider chosen from configuration: the OpenAI-compatible server of `SPEECH_URL`, or none. */
import type { Config } from '../../config.ts';
import { createOpenAiSpeech } from './openai.ts';
import { type SpeechProvider, SpeechUnavailable } from './speech.ts';

export * from './speech.ts';

/** Without `SPEECH_URL` the provider is unavailable: every call throws SpeechUnavailable. */
export function createSpeech(config: Pick<Config, 'speechUrl' | 'speechModel' | 'speechKey'>): SpeechProvider {
  if (config.speechUrl)
    return createOpenAiSpeech({ baseUrl: config.speechUrl, model: config.speechModel, apiKey: config.speechKey });
  return {
    available: false,
    async transcribe() {
      throw new SpeechUnavailable();
    },
  };
}
