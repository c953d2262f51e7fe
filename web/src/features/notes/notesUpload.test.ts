import { describe, expect, it } from 'vitest';
import { chatBody, noteChatReducer, type LiveLine } from './notesChat';
import {
  ACCEPT,
  checkFile,
  chunkBounds,
  chunkDecision,
  chunkedPercent,
  CHUNKED_ABOVE,
  formatBytes,
  kindOf,
  MAX_CHUNK_ATTEMPTS,
  MB,
  percent,
  planRoute,
  sourcesToFollow,
} from './notesUpload';

describe('note upload planning', () => {
  it('knows the accepted types by extension, case-insensitively', () => {
    expect(kindOf('Talk.MP4')).toBe('video');
    expect(kindOf('notes.md')).toBe('markdown');
    expect(kindOf('scan.jpeg')).toBe('image');
    expect(kindOf('archive.zip')).toBeNull();
    expect(kindOf('README')).toBeNull();
    expect(kindOf('.txt')).toBeNull();
    expect(ACCEPT.split(',')).toContain('.docx');
  });
  it('checks type, emptiness and the kind limit before sending', () => {
    expect(checkFile('a.txt', 10)).toEqual({ ok: true, kind: 'txt' });
    expect(checkFile('a.exe', 10)).toEqual({ ok: false, code: 'unsupported_type' });
    expect(checkFile('a.txt', 0)).toEqual({ ok: false, code: 'empty_file' });
    expect(checkFile('a.txt', 20 * MB + 1)).toEqual({ ok: false, code: 'file_too_large', limit: 20 * MB });
    expect(checkFile('a.mp4', 2048 * MB)).toEqual({ ok: true, kind: 'video' });
    expect(checkFile('a.mp4', 2048 * MB + 1).ok).toBe(false);
  });
  it('sends up to 90 MB in one request and larger files in chunks', () => {
    expect(planRoute(1)).toBe('multipart');
    expect(planRoute(CHUNKED_ABOVE)).toBe('multipart');
    expect(planRoute(CHUNKED_ABOVE + 1)).toBe('chunked');
    expect(planRoute(95 * MB)).toBe('chunked');
  });
  it('cuts a file into chunks of chunk_size bytes, the last shorter', () => {
    expect(chunkBounds(20, 8)).toEqual([
      { index: 0, start: 0, end: 8 },
      { index: 1, start: 8, end: 16 },
      { index: 2, start: 16, end: 20 },
    ]);
    expect(chunkBounds(16, 8)).toHaveLength(2);
    expect(chunkBounds(91 * MB, 8 * MB)).toHaveLength(12);
    expect(() => chunkBounds(10, 0)).toThrow(RangeError);
  });
  it('counts progress over all chunks, 100 only at the last byte', () => {
    const chunks = chunkBounds(20, 8);
    expect(chunkedPercent(chunks[0], 0, 20)).toBe(0);
    expect(chunkedPercent(chunks[0], 4, 20)).toBe(20);
    expect(chunkedPercent(chunks[1], 8, 20)).toBe(80);
    expect(chunkedPercent(chunks[2], 999, 20)).toBe(100);
    expect(chunkedPercent(chunks[2], 3, 20)).toBe(95);
    expect(percent(199, 200)).toBe(99);
    expect(percent(5, 0)).toBe(0);
  });
  it('goes on after 200, ends at 201, jumps to the expected index on 409', () => {
    expect(chunkDecision({ status: 200 }, 1)).toEqual({ action: 'next' });
    expect(chunkDecision({ status: 201 }, 1)).toEqual({ action: 'done' });
    expect(chunkDecision({ status: 409, body: { error: 'chunk_out_of_order', expected_index: 3 } }, 1)).toEqual({
      action: 'jump',
      index: 3,
    });
    expect(chunkDecision({ status: 409, body: { error: 'chunk_out_of_order' } }, 1)).toEqual({ action: 'fail' });
  });
  it('retries a lost or refused-for-now chunk with growing pauses, a few times only', () => {
    expect(chunkDecision({ status: 0 }, 1)).toEqual({ action: 'retry', delayMs: 500 });
    expect(chunkDecision({ status: 503 }, 2)).toEqual({ action: 'retry', delayMs: 1000 });
    expect(chunkDecision({ status: 429 }, 3)).toEqual({ action: 'retry', delayMs: 2000 });
    expect(chunkDecision({ status: 400, body: { error: 'chunk_incomplete' } }, 1).action).toBe('retry');
    expect(chunkDecision({ status: 0 }, MAX_CHUNK_ATTEMPTS)).toEqual({ action: 'fail' });
    expect(chunkDecision({ status: 409, body: { expected_index: 1 } }, MAX_CHUNK_ATTEMPTS)).toEqual({ action: 'fail' });
  });
  it('gives up at once on answers a retry cannot fix', () => {
    for (const status of [400, 403, 404, 413, 415]) expect(chunkDecision({ status }, 1)).toEqual({ action: 'fail' });
  });
  it('follows the processing of the oldest few unfinished sources only', () => {
    const sources = [
      { id: 9, status: 'queued' },
      { id: 4, status: 'processing' },
      { id: 3, status: 'done' },
      { id: 7, status: 'queued' },
      { id: 8, status: 'error' },
      { id: 5, status: 'queued' },
    ];
    expect([...sourcesToFollow(sources)]).toEqual([4, 5, 7]);
    expect([...sourcesToFollow(sources, 1)]).toEqual([4]);
    expect(sourcesToFollow([{ id: 1, status: 'done' }]).size).toBe(0);
  });
  it('writes sizes for people', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KB');
    expect(formatBytes(12 * MB)).toBe('12 MB');
    expect(formatBytes(2048 * MB)).toBe('2 GB');
  });
});

describe('note chat', () => {
  const sent = noteChatReducer([], { type: 'send', text: 'What is new?', key: 'k' });
  it('streams the reply, adds created issues before it, closes it with its sources', () => {
    let lines: LiveLine[] = noteChatReducer(sent, { type: 'event', event: 'text_delta', data: { delta: 'Three ' } });
    lines = noteChatReducer(lines, { type: 'event', event: 'text_delta', data: { delta: 'things.' } });
    lines = noteChatReducer(lines, {
      type: 'event',
      event: 'tool_result',
      data: { tool: 'create_issue', issue_id: 7, title: 'Call the vendor', priority: 'P1' },
    });
    lines = noteChatReducer(lines, {
      type: 'event',
      event: 'done',
      data: { message_id: 3, sources: [{ source_id: 2, title: 'memo.txt' }] },
    });
    expect(lines.map((l) => l.role)).toEqual(['user', 'issue', 'assistant']);
    expect(lines[1].issue).toEqual({ id: 7, title: 'Call the vendor', priority: 'P1' });
    expect(lines[2]).toMatchObject({ text: 'Three things.', streaming: false, sources: [{ source_id: 2 }] });
    // After done, later events change nothing.
    expect(noteChatReducer(lines, { type: 'event', event: 'text_delta', data: { delta: 'x' } })).toBe(lines);
  });
  it('keeps the error of a failed reply; clear empties the live lines', () => {
    let lines = noteChatReducer(sent, {
      type: 'event',
      event: 'error',
      data: { error: 'llm_unavailable', message: 'The model is away.' },
    });
    lines = noteChatReducer(lines, { type: 'event', event: 'done', data: { message_id: null, error: 'x' } });
    expect(lines[1]).toMatchObject({ streaming: false, error: 'The model is away.' });
    expect(noteChatReducer(sent, { type: 'failed', message: 'gone' })[1].error).toBe('gone');
    expect(noteChatReducer(lines, { type: 'clear' })).toEqual([]);
  });
  it('once the note holds the exchange, keeps only the created-issue lines', () => {
    const lines = noteChatReducer(sent, {
      type: 'event',
      event: 'tool_result',
      data: { tool: 'create_issue', issue_id: 4, title: 'Survey', priority: 'P2' },
    });
    expect(noteChatReducer(lines, { type: 'settle' }).map((l) => l.issue?.id)).toEqual([4]);
  });
  it('asks about all sources unless some are chosen', () => {
    expect(chatBody('q', null)).toEqual({ message: 'q' });
    expect(chatBody('q', [1, 2])).toEqual({ message: 'q', selectedSourceIds: [1, 2] });
  });
});
