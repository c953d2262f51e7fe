/**
 * OpenAI-compatible speech client over the vendor's SDK (`openai`): `POST {SPEECH_URL}/v1/audio/transcriptions`
 * with the file streamed from disk, `response_format: verbose_json` (text, language, duration, segments).
 */
import fs from 'node:fs';
import path from 'node:path';
import type OpenAI from 'openai';
import { SpeechError, type SpeechProvider, speechLanguage, type Transcription } from './speech.ts';

/**
 * @param opts.baseUrl the server's origin (`SPEECH_URL`); `/v1/audio/transcriptions` is appended.
 * @param opts.timeoutMs per request (default 10 minutes: an hour of audio takes a while).
 */
export function createOpenAiSpeech(opts: {
  baseUrl: string;
  model: string;
  apiKey?: string;
  timeoutMs?: number;
}): SpeechProvider {
  // The SDK is imported at first use (~0.2 s and ~30 MiB of every start otherwise).
  let sdk: Promise<{ client: OpenAI; APIError: typeof OpenAI.APIError; toFile: typeof import('openai').toFile }>;
  const load = () =>
    (sdk ??= import('openai').then(({ default: Sdk, APIError, toFile }) => ({
      client: new Sdk({
        apiKey: opts.apiKey || 'none',
        baseURL: `${opts.baseUrl.replace(/\/+$/, '')}/v1`,
        timeout: opts.timeoutMs ?? 600_000,
        maxRetries: 1,
      }),
      APIError,
      toFile,
    })));
  return {
    available: true,
    async transcribe(input): Promise<Transcription> {
      const language = speechLanguage(input.language);
      const { client, APIError, toFile } = await load();
      try {
        const file = await toFile(fs.createReadStream(input.file), input.filename ?? path.basename(input.file));
        const res = (await client.audio.transcriptions.create(
          {
            file,
            model: opts.model,
            response_format: 'verbose_json',
            ...(language ? { language } : {}),
          },
          { signal: input.signal },
        )) as unknown as { text?: string; language?: string; duration?: number; segments?: Transcription['segments'] };
        return {
          text: String(res.text ?? '').trim(),
          language: res.language ?? language,
          duration: typeof res.duration === 'number' ? res.duration : undefined,
          segments: Array.isArray(res.segments)
            ? res.segments.map((s) => ({ start: Number(s.start), end: Number(s.end), text: String(s.text) }))
            : undefined,
        };
      } catch (err) {
        if (err instanceof APIError)
          throw new SpeechError(`speech server answered ${err.status ?? 'no status'}`, err.status);
        throw new SpeechError(`speech server unreachable: ${(err as Error).message}`);
      }
    },
  };
}
