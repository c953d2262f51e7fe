import { describe, expect, it } from 'vitest';
import {
  classifyUpload,
  clock,
  MAX_FRAMES,
  nextStep,
  noteDropped,
  parseSummary,
  segmentMarks,
  showinfoTimes,
} from './transcripts.rules.ts';

describe('transcript rules', () => {
  it('accepts the allow-listed MIME types with a matching extension only', () => {
    expect(classifyUpload('Standup.MP3', 'audio/mpeg')).toEqual({ ok: true, kind: 'audio', ext: 'mp3' });
    expect(classifyUpload('a.wav', 'audio/wav; codecs=1')).toEqual({ ok: true, kind: 'audio', ext: 'wav' });
    expect(classifyUpload('a.mkv', 'video/x-matroska')).toEqual({ ok: true, kind: 'video', ext: 'mkv' });
    expect(classifyUpload('a.mov', 'video/quicktime')).toMatchObject({ kind: 'video' });
    expect(classifyUpload('a.exe', 'audio/wav')).toEqual({ ok: false, reason: 'bad_extension' });
    expect(classifyUpload('a.wav', 'application/octet-stream')).toEqual({ ok: false, reason: 'bad_mime' });
    expect(classifyUpload('a.mp4', 'audio/wav')).toEqual({ ok: false, reason: 'bad_mime' });
    expect(classifyUpload('wav', 'audio/wav')).toEqual({ ok: false, reason: 'bad_extension' });
  });

  it('orders the steps by kind and skips embedding when asked', () => {
    const walk = (kind: 'audio' | 'video', embed: boolean) => {
      const out: string[] = [];
      let s = nextStep(kind, null, embed);
      while (s) {
        out.push(s);
        s = nextStep(kind, s, embed);
      }
      return out;
    };
    expect(walk('audio', true)).toEqual(['audio', 'transcript', 'summary', 'embedding']);
    expect(walk('video', true)).toEqual(['audio', 'transcript', 'frames', 'vision', 'summary', 'embedding']);
    expect(walk('audio', false)).toEqual(['audio', 'transcript', 'summary']);
  });

  it('notes dropped frames on the last kept description', () => {
    const frames = [
      { ts_ms: 0, description: 'a' },
      { ts_ms: 1, description: 'b' },
    ];
    expect(noteDropped(frames, 0)).toEqual(frames);
    const noted = noteDropped(frames, 7);
    expect(noted[0].description).toBe('a');
    expect(noted[1].description).toBe(`b (7 more frames were dropped: at most ${MAX_FRAMES} are analysed)`);
  });

  it('reads frame times from showinfo lines and formats clocks', () => {
    const err =
      '[Parsed_showinfo_1 @ 0x1] n:   0 pts:      0 pts_time:0       duration\n' +
      '[Parsed_showinfo_1 @ 0x1] n:   1 pts:  20480 pts_time:2.0005  duration\n';
    expect(showinfoTimes(err)).toEqual([0, 2001]);
    expect(clock(65_000)).toBe('01:05');
    expect(clock(3_725_000)).toBe('1:02:05');
  });

  it('parses the summary object, coercing its fields, and refuses an answer without one', () => {
    const now = new Date('2026-11-24T10:00:00Z');
    const s = parseSummary(
      'Here:\n{"tldr":" Ship it ","key_points":["a",3,""],"action_items":[{"task":"t","owner":""},{"x":1}],"decisions":"no","extra":1}',
      'm1',
      now,
    );
    expect(s).toEqual({
      tldr: 'Ship it',
      key_points: ['a'],
      action_items: [{ task: 't', owner: null }],
      decisions: [],
      topics: [],
      model: 'm1',
      generated_at: '2026-11-24T10:00:00.000Z',
    });
    expect(parseSummary('no json', 'm', now)).toBeNull();
    expect(parseSummary('{"key_points":[]}', 'm', now)).toBeNull();
    expect(parseSummary('{broken', 'm', now)).toBeNull();
  });
});

describe('speech segments of a transcript as index marks', () => {
  it('finds each segment in order after the previous one, offset by where the transcript begins', () => {
    const text = 'Hello there. Hello again. Bye.';
    const marks = segmentMarks(
      text,
      [
        { start_ms: 0, end_ms: 1000, text: 'Hello there.' },
        { start_ms: 1000, end_ms: 2000, text: ' Hello again. ' },
        { start_ms: 2000, end_ms: 2500, text: 'not in the text' },
        { start_ms: 2500, end_ms: 3000, text: 'Bye.' },
      ],
      100,
    );
    expect(marks).toEqual([
      { at: 100, start_ms: 0, end_ms: 1000 },
      { at: 113, start_ms: 1000, end_ms: 2000 },
      { at: 126, start_ms: 2500, end_ms: 3000 },
    ]);
  });
});
