import { describe, expect, it } from 'vitest';
import {
  citationsOf,
  cutText,
  defaultTitle,
  fileProblem,
  KIND_LIMITS,
  kindOf,
  quoteFor,
  QUOTE_MAX,
  safeFileName,
  youtubeId,
} from './notes.rules.ts';
import { captionLines, timedText, transcriptionText } from './notes.extract.ts';

describe('note source rules', () => {
  it('knows each accepted kind by extension only', () => {
    expect(kindOf('a.MP4')).toBe('video');
    expect(kindOf('a.m4a')).toBe('audio');
    expect(kindOf('a.pdf')).toBe('pdf');
    expect(kindOf('a.docx')).toBe('docx');
    expect(kindOf('a.txt')).toBe('txt');
    expect(kindOf('README.md')).toBe('markdown');
    expect(kindOf('a.jpeg')).toBe('image');
    for (const f of ['a.exe', 'a.doc', 'a.svg', 'a.html', 'noext', 'a.pdf.exe']) expect(kindOf(f), f).toBeNull();
  });
  it('refuses unknown types, empty files and files over their kind limit', () => {
    expect(fileProblem('a.exe', 10)?.code).toBe('unsupported_type');
    expect(fileProblem('a.pdf', 0)?.code).toBe('empty_file');
    expect(fileProblem('a.pdf', KIND_LIMITS.pdf)).toBeNull();
    expect(fileProblem('a.pdf', KIND_LIMITS.pdf + 1)).toMatchObject({ code: 'file_too_large', limit: KIND_LIMITS.pdf });
    expect(fileProblem('a.mp4', 1024 ** 3)).toBeNull();
  });
  it('keeps safe file names on disk', () => {
    expect(safeFileName('../../etc/passwd.txt')).toBe('passwd.txt');
    expect(safeFileName('..\\..\\x y?.pdf')).toBe('x_y_.pdf');
    expect(safeFileName('.hidden.md')).toBe('hidden.md');
    expect(safeFileName('...')).toBe('file');
  });
  it('names sources by file name or address', () => {
    expect(defaultTitle({ filename: 'dir/Report.pdf' })).toBe('Report.pdf');
    expect(defaultTitle({ url: 'https://example.com/a/b?x=1' })).toBe('example.com/a/b');
    expect(defaultTitle({ url: 'https://example.com/' })).toBe('example.com');
  });
  it('reads YouTube video ids from the usual address forms only', () => {
    expect(youtubeId('https://www.youtube.com/watch?v=dQw4w9WgXcQ')).toBe('dQw4w9WgXcQ');
    expect(youtubeId('https://youtu.be/dQw4w9WgXcQ?t=3')).toBe('dQw4w9WgXcQ');
    expect(youtubeId('https://m.youtube.com/shorts/dQw4w9WgXcQ')).toBe('dQw4w9WgXcQ');
    expect(youtubeId('https://example.com/watch?v=dQw4w9WgXcQ')).toBeNull();
    expect(youtubeId('https://www.youtube.com/watch?v=short')).toBeNull();
    expect(youtubeId('javascript:alert(1)')).toBeNull();
  });
  it('cuts text at the limit, on a line break near the end', () => {
    expect(cutText('abc', 10)).toBe('abc');
    expect(cutText('a'.repeat(95) + '\n' + 'b'.repeat(20), 100)).toBe('a'.repeat(95));
    expect(cutText('x'.repeat(200), 100)).toHaveLength(100);
  });
});

describe('citations of a chat answer', () => {
  const passages = [
    {
      marker: 'S1',
      source_id: 7,
      chunk_id: 70,
      location: { page: 12 },
      title: 'atlas.pdf',
      text: 'Walruses haul out on ice. Narwhal tusks grow to three metres. Belugas are white.',
    },
    {
      marker: 'S2',
      source_id: 8,
      chunk_id: 80,
      location: { start_ms: 845_000, end_ms: 850_000 },
      title: 'talk.wav',
      text: 'We decided to ship on Friday.',
    },
  ];

  it("maps each label used to its passage once, in order, with the passage's own location", () => {
    const c = citationsOf(
      'We ship Friday [S2 00:14:05]. Tusks grow to three metres [S1 p. 99; S2]. Again [S1].',
      passages,
    );
    expect(c.map((x) => x.marker)).toEqual(['S2', 'S1']);
    expect(c[1]).toEqual({
      marker: 'S1',
      source_id: 7,
      chunk_id: 70,
      location: { page: 12 },
      quote: 'Narwhal tusks grow to three metres.',
    });
  });

  it('drops labels that were not in the context and ignores brackets without a label', () => {
    expect(citationsOf('Made up [S3 p. 1], [s9], [see above] and [1].', passages)).toEqual([]);
  });

  it('quotes a span of the passage: the sentence sharing most words with the claim, cut to QUOTE_MAX', () => {
    expect(quoteFor(passages[0].text, 'belugas are white')).toBe('Belugas are white.');
    expect(quoteFor(passages[0].text, 'nothing shared')).toBe(passages[0].text);
    const long = 'word '.repeat(200);
    const q = quoteFor(long, 'word');
    expect(q.length).toBeLessThanOrEqual(QUOTE_MAX);
    expect(long).toContain(q);
  });
});

describe('timed text of sources', () => {
  it('puts one speech segment per line with its timecodes', () => {
    const r = transcriptionText({
      text: 'ignored',
      segments: [
        { start: 0, end: 1.25, text: ' Hello ' },
        { start: 1.25, end: 2, text: '' },
        { start: 2, end: 3.5, text: 'world' },
      ],
    });
    expect(r).toEqual({
      text: 'Hello\nworld',
      marks: [
        { at: 0, start_ms: 0, end_ms: 1250 },
        { at: 6, start_ms: 2000, end_ms: 3500 },
      ],
    });
    expect(transcriptionText({ text: ' plain ' })).toEqual({ text: 'plain' });
  });

  it('reads caption times (seconds in <text>, milliseconds in <p>), and plain lines without them', () => {
    expect(captionLines('<text start="1.5" dur="2">Hi &amp;amp; all</text><text start="4">bye</text>')).toEqual({
      text: 'Hi & all\nbye',
      marks: [
        { at: 0, start_ms: 1500, end_ms: 3500 },
        { at: 9, start_ms: 4000, end_ms: 4000 },
      ],
    });
    expect(captionLines('<p t="2000" d="500">x</p>').marks).toEqual([{ at: 0, start_ms: 2000, end_ms: 2500 }]);
    expect(captionLines('<text>no time</text>')).toEqual({ text: 'no time' });
    expect(timedText([]).text).toBe('');
  });
});
