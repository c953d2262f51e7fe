import { describe, expect, it } from 'vitest';
import { citedLines, clockOf, noteChatReducer, placeLabel, type LiveLine } from './notesChat';

describe('citations in the notes chat', () => {
  it('labels places as the answers cite them', () => {
    expect(placeLabel({ page: 12 })).toBe('p. 12');
    expect(placeLabel({ page: 12, page_end: 13 })).toBe('pp. 12–13');
    expect(placeLabel({ start_ms: 845_000, end_ms: 850_000 })).toBe('00:14:05');
    expect(placeLabel({ heading: 'Setup › Database', line_start: 3, line_end: 9 })).toBe('§ Setup › Database');
    expect(placeLabel({ line_start: 3, line_end: 9 })).toBe('lines 3–9');
    expect(placeLabel({})).toBe('');
    expect(clockOf(3_723_000)).toBe('01:02:03');
  });

  it('finds the cited lines: the line range, else the heading, else the quote', () => {
    const text = '# Guide\n\n## Setup\nInstall.\n### Database\nThe cluster.';
    expect(citedLines(text, { location: { line_start: 4, line_end: 4 }, quote: '' })).toEqual([4, 4]);
    expect(citedLines(text, { location: { heading: 'Setup › Database' }, quote: '' })).toEqual([5, 5]);
    expect(citedLines(text, { location: {}, quote: 'The cluster.' })).toEqual([6, 6]);
    expect(citedLines(text, { location: {}, quote: 'absent' })).toBeNull();
  });

  it('keeps the citations event on the reply being streamed', () => {
    let lines: LiveLine[] = noteChatReducer([], { type: 'send', text: 'q', key: '1' });
    const citation = { marker: 'S1', source_id: 3, chunk_id: 9, location: { page: 2 }, quote: 'x' };
    lines = noteChatReducer(lines, { type: 'event', event: 'citations', data: { citations: [citation] } });
    lines = noteChatReducer(lines, { type: 'event', event: 'done', data: { sources: [] } });
    expect(lines[1]).toMatchObject({ role: 'assistant', streaming: false, citations: [citation] });
  });
});
