/** Voice dictation's call: a recorded clip to text (`POST /api/crm/voice/transcribe`). */
import { api, must } from '../../api/client';

/** The clip types the server accepts, in order of preference, with the file name sent for each. */
export const CLIP_TYPES: [string, string][] = [
  ['audio/webm', 'clip.webm'],
  ['audio/ogg', 'clip.ogg'],
  ['audio/wav', 'clip.wav'],
];

/**
 * Send a recorded clip (webm, ogg or wav, at most 25 MB) with its BCP-47 `locale`; resolves with the text.
 * @throws ApiFailure with the envelope on an error answer (503 `speech_unavailable` when the server has no
 *   speech service, 429 over the daily quota or too many at once, 413 too large).
 */
export async function transcribe(audio: Blob, locale: string): Promise<string> {
  const type = audio.type.split(';')[0].trim().toLowerCase();
  const name = CLIP_TYPES.find(([t]) => t === type)?.[1] ?? 'clip.webm';
  const fd = new FormData();
  fd.append('locale', locale);
  fd.append('audio', new File([audio], name, { type: audio.type }));
  const { transcript } = await must(
    api.POST('/api/crm/voice/transcribe', {
      // The generated type names the binary part a string; the body is the FormData itself, sent as is.
      body: fd as unknown as { audio: string; locale: string },
      bodySerializer: (b) => b as unknown as FormData,
    }),
  );
  return transcript;
}

let status: { token: string; answer: Promise<boolean> } | null = null;

/**
 * Whether the service offers dictation (`GET /api/crm/voice/status`: false without a speech server), asked once
 * per signed-in session (`token`). True while unknown or when the question fails: the button then stays, and a
 * failed dictation says why.
 */
export function speechAvailable(token: string): Promise<boolean> {
  if (status?.token !== token) {
    const answer = api
      .GET('/api/crm/voice/status')
      .then(({ data }) => data?.available !== false)
      .catch(() => true);
    status = { token, answer };
  }
  return status.answer;
}
