import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSpeechStandIn } from '../../../test/standins/speech.ts';
import { createMedia, MediaError, MediaToolMissing } from '../../lib/media.ts';
import { createSpeech, SpeechError, SpeechUnavailable } from './index.ts';

let s: Awaited<ReturnType<typeof startSpeechStandIn>>;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'speech-'));
const media = createMedia();

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
    await media.ffmpeg(['-y', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=2', '-ac', '2', '-ar', '44100', src]);
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

  it('names a missing ffmpeg and refuses a file that is not media', async () => {
    const missing = createMedia({ ffmpegPath: '/nonexistent/ffmpeg' });
    expect(await missing.available()).toBe(false);
    await expect(missing.toSpeechWav('a', 'b')).rejects.toBeInstanceOf(MediaToolMissing);
    const junk = path.join(dir, 'junk.mp3');
    fs.writeFileSync(junk, 'not audio at all');
    await expect(media.toSpeechWav(junk, path.join(dir, 'x.wav'))).rejects.toBeInstanceOf(MediaError);
  });
});
