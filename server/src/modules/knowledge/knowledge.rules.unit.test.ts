import { describe, expect, it } from 'vitest';
import { chunkDocument } from './knowledge.rules.ts';

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
