import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { cliHas, collapsePrompt, decodeTranscript, parseVersion, transcriptMessages } from './cli.rules.ts';

describe('CLI rules', () => {
  it('collapses whitespace and cuts the first prompt to 280 characters without splitting a character', () => {
    expect(collapsePrompt('  fix\n\n the   bug\t now ')).toBe('fix the bug now');
    expect(collapsePrompt('x'.repeat(500))).toHaveLength(280);
    const emoji = '😀'.repeat(300);
    const cut = collapsePrompt(emoji);
    expect(Array.from(cut)).toHaveLength(280);
    expect(cut).toBe('😀'.repeat(280));
  });

  it('gates features by release: heartbeat 1.0.14, summaries 1.0.15, transcripts 1.0.16', () => {
    expect(parseVersion('v1.2.3-beta.1')).toEqual([1, 2, 3]);
    expect(parseVersion('latest')).toBeUndefined();
    expect(cliHas('1.0.13', 'heartbeat')).toBe(false);
    expect(cliHas('1.0.14', 'heartbeat')).toBe(true);
    expect(cliHas('1.0.14', 'sessionSummary')).toBe(false);
    expect(cliHas('1.0.15', 'sessionSummary')).toBe(true);
    expect(cliHas('1.0.15', 'transcriptUpload')).toBe(false);
    expect(cliHas('1.0.16', 'transcriptUpload')).toBe(true);
    expect(cliHas('1.1.0', 'transcriptUpload')).toBe(true);
    expect(cliHas('0.9.99', 'heartbeat')).toBe(false);
    expect(cliHas(undefined, 'transcriptUpload')).toBe(true);
  });

  it('decodes a transcript and refuses what is not base64, not gzip, or too large before or after inflation', () => {
    const raw = Buffer.from('{"role":"user","content":"hi"}\n');
    const ok = decodeTranscript(zlib.gzipSync(raw).toString('base64'));
    expect('raw' in ok && ok.raw.equals(raw)).toBe(true);
    expect(decodeTranscript('not base64 !!!')).toEqual({ problem: 'not_base64' });
    expect(decodeTranscript(Buffer.from('plain text, not gzip at all').toString('base64'))).toEqual({
      problem: 'not_gzip',
    });
    const big = zlib.gzipSync(Buffer.alloc(2000, 1)).toString('base64');
    expect(decodeTranscript(big, { gzipLimit: 10 })).toEqual({ problem: 'too_large_compressed' });
    // A gzip bomb: 64 MB of zeros compress to ~64 KB; inflation stops at the bound.
    const bomb = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024)).toString('base64');
    expect(decodeTranscript(bomb, { rawLimit: 1024 * 1024 })).toEqual({ problem: 'too_large_raw' });
  });

  it('reads viewer messages from plain and agent-log jsonl, skipping junk', () => {
    const jsonl = [
      JSON.stringify({ role: 'user', content: 'hello', ts: '2026-11-01T10:00:00Z' }),
      'not json',
      '[1,2]',
      JSON.stringify({
        type: 'assistant',
        timestamp: '2026-11-01T10:00:05Z',
        message: {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Hi there' },
            { type: 'tool_use', name: 'Read', input: {} },
          ],
        },
      }),
      JSON.stringify({ type: 'summary', summary: 'x' }),
      JSON.stringify({ role: 'user', content: '   ' }),
    ].join('\n');
    expect(transcriptMessages(jsonl)).toEqual([
      { role: 'user', text: 'hello', ts: '2026-11-01T10:00:00.000Z' },
      { role: 'assistant', text: 'Hi there\n[tool: Read]', ts: '2026-11-01T10:00:05.000Z' },
    ]);
  });
});
