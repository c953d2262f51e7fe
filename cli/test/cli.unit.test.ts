import { describe, expect, it } from 'vitest';
import { sessionIdOf, summarize } from '../src/transcript.js';
import { cliHas } from '../../server/src/modules/cli/cli.rules.ts';
import { VERSION } from '../src/version.js';

describe('arc, pure parts', () => {
  it('derives a session id the service accepts from a file name', () => {
    expect(sessionIdOf('/x/0b8f-12ab.jsonl')).toBe('0b8f-12ab');
    expect(sessionIdOf('my session (1).jsonl')).toBe('my-session--1-');
    expect(sessionIdOf('.jsonl')).toBe('session');
  });

  it('counts messages and finds the first user prompt in plain and agent-log jsonl', () => {
    const jsonl = [
      JSON.stringify({ type: 'summary', summary: 'x' }),
      JSON.stringify({ type: 'user', message: { role: 'user', content: [{ type: 'text', text: 'first ask' }] } }),
      'garbage',
      JSON.stringify({ role: 'assistant', content: 'ok' }),
      JSON.stringify({ role: 'user', content: 'second' }),
    ].join('\n');
    expect(summarize(jsonl)).toEqual({ messageCount: 3, firstPrompt: 'first ask' });
  });

  it('is a release with every feature the service gates (heartbeat, summaries, transcripts)', () => {
    for (const f of ['heartbeat', 'sessionSummary', 'transcriptUpload'] as const) expect(cliHas(VERSION, f)).toBe(true);
  });
});
