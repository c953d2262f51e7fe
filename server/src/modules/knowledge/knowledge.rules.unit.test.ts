import { describe, expect, it } from 'vitest';
import { chunkDocument as chunkWithLocations, chunkText, locate } from './knowledge.rules.ts';

/** Chunks without their locations (the splitting rules). */
const chunkDocument = (...args: Parameters<typeof chunkWithLocations>) =>
  chunkWithLocations(...args).map(({ location: _l, ...c }) => c);

const sentences = (n: number) => Array.from({ length: n }, (_, i) => `Sentence number ${i} is here.`).join(' ');

describe('chunkDocument', () => {
  it('splits along headings and keeps the heading path as the title (a leading title heading is not repeated)', () => {
    const chunks = chunkDocument(
      'Wiki',
      '# Wiki\nintro\n\n## Setup\nsetup text\n### Database\ndb text\n## Deploy\ndeploy',
    );
    expect(chunks).toEqual([
      { chunk_ix: 0, title: 'Wiki', text: 'intro' },
      { chunk_ix: 1, title: 'Wiki › Setup', text: 'setup text' },
      { chunk_ix: 2, title: 'Wiki › Setup › Database', text: 'db text' },
      { chunk_ix: 3, title: 'Wiki › Deploy', text: 'deploy' },
    ]);
  });

  it('skips headings with no text below them and levels that were jumped', () => {
    expect(chunkDocument('T', '# Empty\n\n## Also empty\n#### Deep\nx')).toEqual([
      { chunk_ix: 0, title: 'T › Empty › Also empty › Deep', text: 'x' },
    ]);
  });

  it('does not take a # line inside a code fence for a heading', () => {
    expect(chunkDocument('T', '```\n# not a heading\n```\n## Real\nx')).toEqual([
      { chunk_ix: 0, title: 'T', text: '```\n# not a heading\n```' },
      { chunk_ix: 1, title: 'T › Real', text: 'x' },
    ]);
  });

  it('indexes the title alone for an empty text, nothing without a title', () => {
    expect(chunkDocument('Doc', '')).toEqual([{ chunk_ix: 0, title: 'Doc', text: 'Doc' }]);
    expect(chunkDocument('  ', '')).toEqual([]);
  });

  it('normalizes line ends and collapses runs of blank lines', () => {
    expect(chunkDocument('T', 'a\r\nb\r\n\r\n\r\n\r\nc')).toEqual([{ chunk_ix: 0, title: 'T', text: 'a\nb\n\nc' }]);
  });

  it('cuts a long section into windows of at most maxChars at sentence ends, overlapping the previous one', () => {
    const text = sentences(50);
    const chunks = chunkDocument('L', text, { maxChars: 200, overlap: 50 });
    expect(chunks.length).toBeGreaterThan(5);
    expect(chunks.map((c) => c.chunk_ix)).toEqual(chunks.map((_, i) => i));
    for (const c of chunks) {
      expect(c.title).toBe('L');
      expect(c.text.length).toBeLessThanOrEqual(200);
      expect(text).toContain(c.text);
    }
    // Every window but the last ends at a sentence end; each next one starts inside the previous one.
    for (const c of chunks.slice(0, -1)) expect(c.text.endsWith('.')).toBe(true);
    for (let i = 1; i < chunks.length; i++) {
      const prevEnd = text.indexOf(chunks[i - 1].text) + chunks[i - 1].text.length;
      expect(text.indexOf(chunks[i].text)).toBeLessThan(prevEnd);
    }
    // Together they cover the text.
    expect(text.startsWith(chunks[0].text)).toBe(true);
    expect(text.endsWith(chunks.at(-1)!.text)).toBe(true);
  });

  it('keeps a section shorter than maxChars whole, and stops at maxChunks', () => {
    expect(chunkDocument('S', 'short text', { maxChars: 200 })).toHaveLength(1);
    expect(chunkDocument('L', sentences(50), { maxChars: 200, overlap: 50, maxChunks: 3 })).toHaveLength(3);
  });
});

describe('chunk locations', () => {
  it('gives text chunks their heading path inside the document and their 1-based lines', () => {
    const text = '# Wiki\nintro\n\n## Setup\nsetup text\n### Database\ndb line one\ndb line two\n## Deploy\ndeploy';
    expect(chunkWithLocations('Wiki', text).map((c) => c.location)).toEqual([
      { line_start: 2, line_end: 2 },
      { heading: 'Setup', line_start: 5, line_end: 5 },
      { heading: 'Setup › Database', line_start: 7, line_end: 8 },
      { heading: 'Deploy', line_start: 10, line_end: 10 },
    ]);
  });

  it('counts lines of the text as given (CRLF, collapsed blank lines)', () => {
    const [c] = chunkWithLocations('T', 'x\r\n\r\n\r\n\r\n# H\r\n\r\n\r\n\r\nbody\r\nmore').slice(1);
    expect(c).toMatchObject({ text: 'body\nmore', location: { heading: 'H', line_start: 9, line_end: 10 } });
  });

  it('gives pages (and a page range when a passage runs onto the next page) from page marks', () => {
    const pages = ['one '.repeat(40), 'two '.repeat(40), 'three '.repeat(40)].map((p) => p.trim());
    let text = '';
    const marks = pages.map((p, i) => {
      if (text) text += '\n\n';
      const at = text.length;
      text += p;
      return { at, page: i + 1 };
    });
    const chunks = chunkWithLocations('P', text, { marks, maxChars: 200, overlap: 40 });
    for (const c of chunks) {
      expect(c.location.line_start).toBeUndefined();
      const first = c.text.startsWith('one') ? 1 : c.text.startsWith('two') ? 2 : 3;
      const last = c.text.endsWith('one') ? 1 : c.text.endsWith('two') ? 2 : 3;
      expect(c.location.page).toBe(first);
      expect(c.location.page_end).toBe(last > first ? last : undefined);
    }
    expect(chunks.some((c) => c.location.page_end)).toBe(true);
  });

  it("gives timecodes from segment marks: the first segment's start, the last one's end", () => {
    const marks = [
      { at: 0, start_ms: 0, end_ms: 1500 },
      { at: 10, start_ms: 1500, end_ms: 4000 },
      { at: 20, start_ms: 4000, end_ms: 9000 },
    ];
    expect(locate(12, 25, marks, [0])).toEqual({ start_ms: 1500, end_ms: 9000 });
    expect(locate(0, 5, marks, [0])).toEqual({ start_ms: 0, end_ms: 1500 });
    // Before the first mark (e.g. a transcript's summary): no timecode.
    expect(locate(0, 5, [{ at: 10, start_ms: 0, end_ms: 1 }], [0], 'Summary')).toEqual({ heading: 'Summary' });
  });

  it('says how far the chunks reach when maxChunks cuts the document, the whole length otherwise', () => {
    const text = sentences(50);
    const cut = chunkText('L', text, { maxChars: 200, overlap: 50, maxChunks: 3 });
    expect(cut.chunks).toHaveLength(3);
    expect(cut.indexedChars).toBe(text.indexOf(cut.chunks[2].text) + cut.chunks[2].text.length);
    expect(cut.indexedChars).toBeLessThan(text.length);
    expect(chunkText('L', text, { maxChars: 200, overlap: 50 }).indexedChars).toBe(text.length);
  });
});

describe('locate with activity marks', () => {
  it('names the first and last activity entry a passage covers, and keeps its lines', () => {
    const text = '# #1 Title\n\nThe description.\n\n## Log\n- a: one\n- b: two';
    const at1 = text.indexOf('- a');
    const at2 = text.indexOf('- b');
    const marks = [
      { at: at1, activity_id: 11 },
      { at: at2, activity_id: 12 },
    ];
    const starts = [0];
    for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
    // From the description to the end: both entries, and the lines.
    expect(locate(0, text.length, marks, starts)).toMatchObject({
      activity_id: 11,
      activity_id_end: 12,
      line_start: 1,
    });
    // The second entry alone.
    expect(locate(at2, text.length, marks, starts)).toEqual({ activity_id: 12, line_start: 7, line_end: 7 });
    // The description alone names no entry.
    expect(locate(0, at1 - 1, marks, starts)).toEqual({ line_start: 1, line_end: 5 });
  });
});
