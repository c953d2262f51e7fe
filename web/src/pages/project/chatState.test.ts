import { describe, expect, it } from 'vitest';
import { buildThread, liveReducer, type LiveState, type RunBrief } from './chatState';

describe('live runs', () => {
  it('a snapshot sets the text so far, deltas grow it, tool results add cards, done closes it with the whole reply', () => {
    let s: LiveState = liveReducer({}, { type: 'start', runId: 7 });
    s = liveReducer(s, { type: 'event', runId: 7, event: 'snapshot', data: { text: 'Hel', status: 'running' } });
    s = liveReducer(s, { type: 'event', runId: 7, event: 'text_delta', data: { delta: 'lo' } });
    s = liveReducer(s, {
      type: 'event',
      runId: 7,
      event: 'tool_result',
      data: { tool: 'create_issue', is_error: false, issue_id: 3, title: 'Fix', priority: 'P1' },
    });
    expect(s[7]).toMatchObject({ text: 'Hello', streaming: true, status: 'running' });
    expect(s[7].tools).toEqual([{ tool: 'create_issue', is_error: false, issue_id: 3, title: 'Fix', priority: 'P1' }]);
    s = liveReducer(s, { type: 'lost', runId: 7 });
    expect(s[7].reconnecting).toBe(true);
    s = liveReducer(s, {
      type: 'event',
      runId: 7,
      event: 'done',
      data: { status: 'succeeded', reply: 'Hello, world', usage: { input_tokens: 5, output_tokens: 2 } },
    });
    expect(s[7]).toMatchObject({ text: 'Hello, world', streaming: false, reconnecting: false, status: 'succeeded' });
    expect(s[7].usage).toEqual({ input_tokens: 5, output_tokens: 2 });
  });
  it('an approval request marks the wait; done with an error keeps the message', () => {
    let s = liveReducer({}, { type: 'start', runId: 1 });
    s = liveReducer(s, { type: 'event', runId: 1, event: 'approval_requested', data: { approval_id: 4 } });
    expect(s[1].status).toBe('waiting_approval');
    s = liveReducer(s, {
      type: 'event',
      runId: 1,
      event: 'done',
      data: { status: 'failed', error: 'x', error_message: 'The model failed.' },
    });
    expect(s[1]).toMatchObject({ status: 'failed', error: 'The model failed.' });
  });
});

describe('thread', () => {
  const run = (id: number, worker: number, message: number, status = 'succeeded'): RunBrief => ({
    id,
    worker_id: worker,
    message_id: message,
    status,
    tool_calls: [],
    error: null,
    error_message: null,
  });
  it('a message to two workers is one thread with each reply; a reply still streaming shows its live text', () => {
    const messages = [
      { id: 1, role: 'user' as const, worker_id: null, content: 'plan it' },
      { id: 2, role: 'assistant' as const, worker_id: 10, content: 'A plan.', run_id: 100 },
    ];
    const live: LiveState = { 101: { text: 'Work', tools: [], status: 'running', streaming: true } };
    const items = buildThread(messages, [run(101, 11, 1, 'running'), run(100, 10, 1)], live, () => true);
    expect(items.map((i) => (i.kind === 'user' ? ['user', i.text] : [i.workerId, i.text, i.status]))).toEqual([
      ['user', 'plan it'],
      [10, 'A plan.', 'succeeded'],
      [11, 'Work', 'running'],
    ]);
    // Only the workers in view get a slot; an old reply without a known run shows where it is.
    const one = buildThread(messages, [run(101, 11, 1, 'running')], live, (w) => w === 10);
    expect(one.map((i) => i.kind)).toEqual(['user', 'reply']);
    expect(one[1]).toMatchObject({ workerId: 10, text: 'A plan.', prompt: 'plan it' });
  });
});
