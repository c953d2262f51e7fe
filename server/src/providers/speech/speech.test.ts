import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSpeechStandIn } from '../../../test/standins/speech.ts';
import { createMedia, MediaError, MediaToolMissing } from '../../lib/media.ts';
import { createSpeech, SpeechError, SpeechUnavailable } from './index.ts';
import { pieceSeconds } from './pieces.ts';

let s: Awaited<ReturnType<typeof startSpeechStandIn>>;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'speech-'));
const media = createMedia();
/** Make a test file with the system's ffmpeg (lavfi sources, which the service's ffmpeg calls never read). */
const generate = (args: string[]) =>
  execFileSync(process.env.FFMPEG_PATH || 'ffmpeg', ['-nostdin', '-hide_banner', '-loglevel', 'error', ...args]);

beforeAll(async () => {
  s = await startSpeechStandIn();
});
afterAll(async () => {
  await s?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('ffmpeg and the speech server', () => {
  it('converts a stereo 44.1 kHz file to 16 kHz mono WAV and transcribes it through the real client', async () => {
    const src = path.join(dir, 'tone.mp3');
    generate(['-y', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=2', '-ac', '2', '-ar', '44100', src]);
    const info = await media.probe(src);
    expect(info.hasAudio).toBe(true);
    expect(info.hasVideo).toBe(false);
    expect(info.durationSeconds).toBeGreaterThan(1.9);
    const wav = path.join(dir, 'tone.wav');
    await media.toSpeechWav(src, wav);
    const out = await media.probe(wav);
    expect(out.format).toContain('wav');
    // 2 s × 16,000 samples × 2 bytes + the header.
    expect(Math.abs(fs.statSync(wav).size - 64_044)).toBeLessThan(2000);

    s.respond(() => ({ text: 'a clear tone' }));
    const speech = createSpeech({ speechUrl: s.url, speechModel: 'whisper-test', speechKey: undefined });
    const t = await speech.transcribe({ file: wav, language: 'uk-UA' });
    expect(t.text).toBe('a clear tone');
    const req = s.requests.at(-1)!;
    expect(req).toMatchObject({ model: 'whisper-test', language: 'uk', responseFormat: 'verbose_json' });
    expect(req.head.subarray(0, 4).toString('latin1')).toBe('RIFF');
  });

  it('reports a non-200 answer with its status, and no server as unavailable', async () => {
    const wav = path.join(dir, 'tone.wav');
    s.respond(() => ({ status: 500 }));
    const speech = createSpeech({ speechUrl: s.url, speechModel: 'm', speechKey: undefined });
    const err = await speech.transcribe({ file: wav }).catch((e) => e);
    expect(err).toBeInstanceOf(SpeechError);
    expect(err.status).toBe(500);
    const none = createSpeech({ speechUrl: undefined, speechModel: 'm', speechKey: undefined });
    expect(none.available).toBe(false);
    await expect(none.transcribe({ file: wav })).rejects.toBeInstanceOf(SpeechUnavailable);
  });

  it('sends audio longer than the server takes in pieces, in order, and joins texts and segments', async () => {
    // A server that refuses files over 500,000 bytes (as OpenAI's refuses 25 MB) and 40 s of audio (1.28 MB).
    const small = await startSpeechStandIn({ maxBytes: 500_000 });
    try {
      const wav = path.join(dir, 'long.wav');
      generate(['-y', '-f', 'lavfi', '-i', 'sine=frequency=300:duration=40', path.join(dir, 'long.mp3')]);
      await media.toSpeechWav(path.join(dir, 'long.mp3'), wav);
      expect(fs.statSync(wav).size).toBeGreaterThan(1_200_000);
      const config = { speechUrl: small.url, speechModel: 'm', speechKey: undefined, speechMaxFileBytes: 500_000 };

      // Whole, the server refuses it.
      const whole = await createSpeech(config)
        .transcribe({ file: wav })
        .catch((e) => e);
      expect(whole).toBeInstanceOf(SpeechError);
      expect(whole.status).toBe(413);

      let n = 0;
      small.respond(() => ({ text: `part ${++n}` }));
      small.requests.length = 0;
      const t = await createSpeech(config, media).transcribe({ file: wav, filename: 'long.wav', language: 'en' });
      expect(pieceSeconds(500_000)).toBe(14);
      expect(pieceSeconds(100_000)).toBe(2); // the smallest SPEECH_MAX_FILE_BYTES still fits
      expect(small.requests.map((r) => r.filename)).toEqual(['long-1.wav', 'long-2.wav', 'long-3.wav']);
      expect(small.requests.every((r) => r.bytes <= 500_000 && r.language === 'en')).toBe(true);
      expect(t.text).toBe('part 1 part 2 part 3');
      expect(t.segments!.map((s) => Math.round(s.start))).toEqual([0, 14, 28]);
      expect(t.segments!.map((s) => s.text)).toEqual(['part 1', 'part 2', 'part 3']);
      expect(t.duration).toBeCloseTo(40, 0);
      // The pieces are gone.
      expect(fs.readdirSync(dir).filter((f) => f.startsWith('.speech-pieces-'))).toEqual([]);

      // A failing piece stops the rest and fails the whole; the pieces are gone then too.
      n = 0;
      small.requests.length = 0;
      small.respond(() => (++n >= 2 ? { status: 500 } : { text: 'ok' }));
      const err = await createSpeech(config, media)
        .transcribe({ file: wav })
        .catch((e) => e);
      expect(err).toBeInstanceOf(SpeechError);
      // The client retries a 500 once; the third piece is never sent.
      expect(small.requests.map((r) => r.filename)).toEqual(['audio-1.wav', 'audio-2.wav', 'audio-2.wav']);
      expect(fs.readdirSync(dir).filter((f) => f.startsWith('.speech-pieces-'))).toEqual([]);
    } finally {
      await small.close();
    }
  });

  it('names a missing ffmpeg and refuses a file that is not media', async () => {
    const missing = createMedia({ ffmpegPath: '/nonexistent/ffmpeg' });
    expect(await missing.available()).toBe(false);
    await expect(missing.toSpeechWav(path.join(dir, 'tone.wav'), 'b')).rejects.toBeInstanceOf(MediaToolMissing);
    const junk = path.join(dir, 'junk.mp3');
    fs.writeFileSync(junk, 'not audio at all');
    await expect(media.toSpeechWav(junk, path.join(dir, 'x.wav'))).rejects.toBeInstanceOf(MediaError);
  });
});

describe('an upload is read only as the container its bytes name', () => {
  it('a playlist named like audio that lists a real WAV on disk is refused everywhere ffmpeg reads, and the speech server receives nothing', async () => {
    const secret = path.join(dir, 'other-tenant', 'secret.wav');
    fs.mkdirSync(path.dirname(secret), { recursive: true });
    generate(['-y', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', secret]);
    const secretMp3 = path.join(dir, 'other-tenant', 'secret.mp3');
    generate(['-y', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', secretMp3]);
    const hls = path.join(dir, 'a.mp3');
    fs.writeFileSync(hls, `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:1.0,\n${secret}\n#EXT-X-ENDLIST\n`);
    const hlsMp3 = path.join(dir, 'c.mp3');
    fs.writeFileSync(hlsMp3, `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:1.0,\n${secretMp3}\n#EXT-X-ENDLIST\n`);
    // concat reads names relative to the list (here a file beside it, as uploads lie beside each other).
    fs.copyFileSync(secret, path.join(dir, 'neighbour.wav'));
    const concat = path.join(dir, 'b.wav');
    fs.writeFileSync(concat, `ffconcat version 1.0\nfile neighbour.wav\n`);
    for (const file of [hls, hlsMp3, concat]) {
      await expect(media.probe(file)).rejects.toBeInstanceOf(MediaError);
      await expect(media.toSpeechWav(file, path.join(dir, 'out.wav'))).rejects.toBeInstanceOf(MediaError);
      await expect(media.ffmpeg(file, ['-y', path.join(dir, 'out.wav')])).rejects.toBeInstanceOf(MediaError);
    }
    expect(fs.existsSync(path.join(dir, 'out.wav'))).toBe(false);
    // Through the speech client's pieces (a voice clip over the server's size): nothing is sent.
    const before = s.requests.length;
    const pieces = createSpeech(
      { speechUrl: s.url, speechModel: 'm', speechKey: undefined, speechMaxFileBytes: 10 },
      media,
    );
    await expect(pieces.transcribe({ file: hlsMp3 })).rejects.toBeInstanceOf(MediaError);
    expect(s.requests.length).toBe(before);
    // The real WAV itself still reads.
    expect((await media.probe(secret)).format).toBe('wav');
  });
});
