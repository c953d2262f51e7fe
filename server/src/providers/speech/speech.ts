/**
 * Speech to text seen from the service: the OpenAI-compatible transcription API
 * (`POST {SPEECH_URL}/v1/audio/transcriptions`, multipart `file`, `model`, `language`), used by voice
 * dictation, meeting transcripts and audio/video note sources. Without `SPEECH_URL` every call fails with
 * `SpeechUnavailable`, which areas answer as 503 `speech_unavailable`.
 */

/** One transcription: the text and, when the server gives them, timed segments (seconds). */
export interface Transcription {
  text: string;
  /** The language the server detected or was told (BCP-47 or ISO 639-1), when it says. */
  language?: string;
  /** Duration of the audio in seconds, when the server says. */
  duration?: number;
  segments?: Array<{ start: number; end: number; text: string }>;
}

export interface SpeechProvider {
  /** Whether a speech server is configured. */
  readonly available: boolean;
  /**
   * Transcribe one audio file (any format the server takes; the service sends 16 kHz mono WAV or the
   * browser's webm/ogg/wav clip).
   * @param input.file absolute path of the audio file, read as a stream (never buffered whole).
   * @param input.language BCP-47 tag passed as the server's `language` (its primary subtag).
   * @throws SpeechUnavailable when none is configured; SpeechError on a non-200 answer or a network failure.
   */
  transcribe(input: {
    file: string;
    filename?: string;
    language?: string;
    signal?: AbortSignal;
  }): Promise<Transcription>;
}

/** No speech server is configured (`SPEECH_URL` unset). */
export class SpeechUnavailable extends Error {
  constructor() {
    super('No speech server is configured (SPEECH_URL).');
    this.name = 'SpeechUnavailable';
  }
}

/** The speech server failed: `status` is its HTTP status (undefined for a network failure or timeout). */
export class SpeechError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'SpeechError';
  }
}

/** The `language` the transcription API takes for a BCP-47 tag: its primary subtag (`uk-UA` → `uk`). */
export function speechLanguage(tag: string | undefined): string | undefined {
  const primary = tag?.trim().split(/[-_]/)[0]?.toLowerCase();
  return primary && /^[a-z]{2,3}$/.test(primary) ? primary : undefined;
}
