/**
 * Long audio in pieces. Speech servers cap one upload (OpenAI's transcription API takes at most 25 MB, about
 * 13 minutes of the 16 kHz mono WAV the service sends), while a meeting recording may run for hours. A file
 * larger than `maxFileBytes` is cut by ffmpeg into consecutive 16 kHz mono WAV pieces that each fit. They are
 * transcribed one after the other, in order, and joined: the texts with a space, the segments shifted by the
 * pieces' start times, the durations summed. The pieces live in a temporary folder beside the file (inside
 * the caller's own work folder) and are removed afterwards, whatever happens.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Media } from '../../lib/media.ts';
import type { SpeechProvider, Transcription } from './speech.ts';

/** Bytes per second of 16 kHz mono 16-bit PCM. */
const WAV_BYTES_PER_SECOND = 32_000;

/**
 * How many whole seconds each piece may last so that its WAV stays under `maxFileBytes` (header and a 5%
 * margin included); at least 1 s (`SPEECH_MAX_FILE_BYTES` is at least 100,000 bytes, about 2.8 s).
 */
export function pieceSeconds(maxFileBytes: number): number {
  return Math.max(1, Math.floor(((maxFileBytes - 4096) * 0.95) / WAV_BYTES_PER_SECOND));
}

/**
 * `base` with long files sent in pieces (see the module comment).
 * @param opts.maxFileBytes files up to this size go to `base` unchanged.
 * @throws what `base` throws (the first failing piece stops the rest), MediaToolMissing / MediaError when
 *   ffmpeg cannot cut the file.
 */
export function withPieces(base: SpeechProvider, media: Media, opts: { maxFileBytes: number }): SpeechProvider {
  return {
    available: base.available,
    async transcribe(input): Promise<Transcription> {
      const { size } = await fsp.stat(input.file);
      if (size <= opts.maxFileBytes) return base.transcribe(input);
      const dir = await fsp.mkdtemp(path.join(path.dirname(input.file), '.speech-pieces-'));
      try {
        await media.ffmpeg(
          input.file,
          [
            '-loglevel',
            'error',
            '-y',
            '-vn',
            '-ac',
            '1',
            '-ar',
            '16000',
            '-c:a',
            'pcm_s16le',
            '-f',
            'segment',
            '-segment_time',
            String(pieceSeconds(opts.maxFileBytes)),
            '-reset_timestamps',
            '1',
            path.join(dir, 'piece-%05d.wav'),
          ],
          { signal: input.signal },
        );
        const pieces = (await fsp.readdir(dir)).filter((f) => f.endsWith('.wav')).sort();
        const texts: string[] = [];
        const segments: NonNullable<Transcription['segments']> = [];
        let offset = 0;
        let language: string | undefined;
        for (const [i, name] of pieces.entries()) {
          const file = path.join(dir, name);
          const t = await base.transcribe({
            file,
            filename: `${path.parse(input.filename ?? 'audio.wav').name}-${i + 1}.wav`,
            language: input.language,
            signal: input.signal,
          });
          if (t.text) texts.push(t.text);
          language ??= t.language;
          for (const seg of t.segments ?? [])
            segments.push({ start: seg.start + offset, end: seg.end + offset, text: seg.text });
          const seconds = (await media.probe(file, { signal: input.signal })).durationSeconds;
          offset += seconds ?? t.duration ?? 0;
        }
        return { text: texts.join(' '), language, duration: offset, ...(segments.length ? { segments } : {}) };
      } finally {
        await fsp.rm(dir, { recursive: true, force: true });
      }
    },
  };
}
