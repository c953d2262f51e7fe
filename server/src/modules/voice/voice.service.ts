/**
 * Voice dictation (docs/ARCHITECTURE.md, Meeting transcripts and voice dictation): a short clip (webm, ogg or wav, up
 * to 25 MB) streamed to a temporary file and sent to the speech server with the caller's locale as its language.
 * Seconds are estimated from the upload size (VOICE_BYTES_PER_SECOND) and counted per user per UTC day in the database
 * (3600 a day); at most 2 dictations of a user run at once, across instances.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Multipart } from '@fastify/multipart';
import type { Actor } from '../../http/auth.ts';
import { AppError, BadRequest, PayloadTooLarge, TooManyRequests, Upstream } from '../../http/errors.ts';
import { sniffFile, type Container } from '../../lib/media.ts';
import { SpeechError, type SpeechProvider } from '../../providers/speech/index.ts';
import type { VoiceRepo } from './voice.repo.ts';

/** Largest clip (Limits → Voice: 25 MB). */
export const VOICE_MAX_BYTES = 25 * 1024 * 1024;
/** Estimated seconds a user may dictate per UTC day (Limits → Voice: 3600). */
export const VOICE_DAILY_SECONDS = 3600;
/** Dictations of one user at once (Limits → Voice: 2 concurrent). */
export const VOICE_MAX_RUNNING = 2;
/** Bytes counted as one second of speech (a 128 kbit/s stream): the duration proxy of the quota. */
export const VOICE_BYTES_PER_SECOND = 16_000;
/** A dictation row whose process died stops counting after this (s). */
export const VOICE_JOB_TTL_SECONDS = 600;

/** Accepted clip types (webm, ogg, wav) → file extension. */
const VOICE_MIMES: Record<string, string> = {
  'audio/webm': 'webm',
  'video/webm': 'webm',
  'audio/ogg': 'ogg',
  'audio/opus': 'ogg',
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/wave': 'wav',
  'audio/vnd.wave': 'wav',
};

/** The containers a clip's bytes may be (webm is Matroska), whatever its declared type (lib/media.ts). */
const VOICE_CONTAINERS: ReadonlySet<Container> = new Set<Container>(['matroska', 'ogg', 'wav']);

/** A BCP-47 language tag, loosely (`uk`, `en-US`, `zh-Hant-TW`). */
const LOCALE = /^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8}){0,4}$/;

/** Estimated seconds of a clip of `bytes` (at least 1). */
export const estimateSeconds = (bytes: number): number => Math.max(1, Math.ceil(bytes / VOICE_BYTES_PER_SECOND));

const nextUtcMidnight = () => {
  const d = new Date();
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)).toISOString();
};

export function createVoiceService(deps: {
  repo: VoiceRepo;
  speech: SpeechProvider;
  /** Folder of temporary clips (`DATA_DIR/tmp`). */
  tmpDir: string;
}) {
  const { repo } = deps;
  const quota = (used: number) =>
    new TooManyRequests('voice_quota_exceeded', 'The daily dictation quota is used up; it resets at midnight UTC.', {
      limit_seconds: VOICE_DAILY_SECONDS,
      used_seconds: used,
      resets_at: nextUtcMidnight(),
    });
  const busy = () =>
    new TooManyRequests('voice_busy', `At most ${VOICE_MAX_RUNNING} dictations may run at once; try again shortly.`, {
      limit: VOICE_MAX_RUNNING,
    });

  return {
    maxBytes: VOICE_MAX_BYTES,
    /** `GET /voice/status`: `{available}`, false without a speech server (no SPEECH_URL). */
    status(): { available: boolean } {
      return { available: deps.speech.available };
    },
    /**
     * `POST /voice/transcribe`: multipart `audio` and `locale` → `{transcript}`.
     * @throws 400 `audio_required` | `locale_required` | `invalid_locale` | `invalid_mime` (declared type, or bytes
     *   that are not webm, ogg or wav) | `empty_file`;
     *   413 `payload_too_large` over 25 MB; 429 `voice_quota_exceeded` (3600 estimated seconds a day) or
     *   `voice_busy` (2 under way); 502 `speech_error` (the server answered non-200 or could not be reached);
     *   503 `speech_unavailable` (no SPEECH_URL).
     */
    async transcribe(actor: Actor, parts: () => AsyncIterableIterator<Multipart>): Promise<{ transcript: string }> {
      if (!deps.speech.available)
        throw new Upstream(503, 'speech_unavailable', 'No speech server is configured; dictation needs one.');
      const used = await repo.usedToday(actor.id);
      if (used >= VOICE_DAILY_SECONDS) throw quota(used);
      if ((await repo.running(actor.id)) >= VOICE_MAX_RUNNING) throw busy();

      let tmp: string | null = null;
      let locale: string | undefined;
      let ext = 'webm';
      try {
        for await (const part of parts()) {
          if (part.type === 'field') {
            if (part.fieldname === 'locale') locale = String(part.value ?? '').trim();
            continue;
          }
          if (part.fieldname !== 'audio' || tmp) {
            part.file.resume();
            continue;
          }
          const mime = (part.mimetype ?? '').split(';')[0].trim().toLowerCase();
          if (!VOICE_MIMES[mime]) {
            part.file.resume();
            throw new BadRequest('invalid_mime', 'The clip must be webm, ogg or wav audio.');
          }
          ext = VOICE_MIMES[mime];
          await fsp.mkdir(deps.tmpDir, { recursive: true });
          tmp = path.join(deps.tmpDir, `voice-${crypto.randomUUID()}.${ext}`);
          await pipeline(part.file, fs.createWriteStream(tmp, { flags: 'wx' }));
          if (part.file.truncated)
            throw new PayloadTooLarge('The clip is larger than 25 MB.', 'payload_too_large', {
              limit_bytes: VOICE_MAX_BYTES,
            });
        }
        if (!tmp) throw new BadRequest('audio_required', 'The multipart field `audio` is required.');
        if (!locale) throw new BadRequest('locale_required', 'The multipart field `locale` is required.');
        if (!LOCALE.test(locale)) throw new BadRequest('invalid_locale', 'locale must be a BCP-47 tag such as en-US.');
        const bytes = (await fsp.stat(tmp)).size;
        if (!bytes) throw new BadRequest('empty_file', 'The clip is empty.');
        // Its bytes, not its declared type, decide: a playlist or any other file is never sent on (nor cut by ffmpeg).
        const container = await sniffFile(tmp);
        if (!container || !VOICE_CONTAINERS.has(container))
          throw new BadRequest('invalid_mime', 'The clip must be webm, ogg or wav audio.');
        const seconds = estimateSeconds(bytes);
        const begun = await repo.begin(actor.id, seconds, {
          dailyLimit: VOICE_DAILY_SECONDS,
          maxRunning: VOICE_MAX_RUNNING,
          ttlSeconds: VOICE_JOB_TTL_SECONDS,
        });
        if (!begun.ok) throw begun.reason === 'busy' ? busy() : quota(begun.used);
        try {
          const t = await deps.speech.transcribe({ file: tmp, filename: `clip.${ext}`, language: locale });
          return { transcript: t.text };
        } catch (err) {
          await repo.refund(actor.id, seconds);
          if (err instanceof SpeechError)
            throw new Upstream(
              502,
              'speech_error',
              err.status ? `The speech server answered ${err.status}.` : 'The speech server could not be reached.',
              err.status ? { upstream_status: err.status } : {},
            );
          if (err instanceof AppError) throw err;
          throw err;
        } finally {
          await repo.end(begun.jobId);
        }
      } finally {
        if (tmp) await fsp.rm(tmp, { force: true }).catch(() => {});
      }
    },
  };
}

export type VoiceService = ReturnType<typeof createVoiceService>;
