import { describe, expect, it } from 'vitest';
import type { LlmResponse } from '../models/model-gateway.ts';
import { createBuiltinEngine, type EngineHooks, type ModelCaller } from './engine.ts';
import { replayDecision, type RunJournal } from './journal.ts';
import type { AgentTool, ToolContext } from './tools.ts';

/** A model that answers from a script, recording each request's conversation length. */
function scriptedModel(answers: Array<LlmResponse['content']>) {
  const requests: Array<Parameters<ModelCaller>[0]> = [];
  const call: ModelCaller = async (req) => {
    const { signal, ...rest } = req;
    requests.push({ ...structuredClone(rest), signal });
    const content = answers.shift();
    if (!content) throw new Error('no more scripted answers');
    return {
      content,
      stop_reason: content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn',
      usage: { input_tokens: 10, output_tokens: 5, cache_tokens: 0 },
      model: req.model,
    };
  };
  return { call, requests };
}

/** Tools that record their runs: `look` (read), `save` (idempotent), `file` (write). */
function recordingTools() {
  const ran: string[] = [];
  const tool = (name: string, effect: AgentTool['effect']): AgentTool => ({
    name,
    effect,
    group: 'test',
    description: name,
    input_schema: { type: 'object', properties: {} },
    async run() {
      ran.push(name);
      return { content: `${name} done` };
    },
  });
  return { ran, tools: [tool('look', 'read'), tool('save', 'idempotent'), tool('file', undefined)] };
}

const use = (id: string, name: string) => ({ type: 'tool_use' as const, id, name, input: {} });
const text = (t: string) => ({ type: 'text' as const, text: t });

function hooks(journals: RunJournal[]): EngineHooks {
  return {
    onText() {},
    onToolResult() {},
    beforeTurn: async () => {},
    onEscalate: async () => {},
    checkpoint: async (j) => void journals.push(structuredClone(j)),
  };
}

const input = (call: ModelCaller, tools: AgentTool[], resume?: RunJournal) => ({
  system: 'S',
  messages: [{ role: 'user' as const, content: 'go' }],
  tools,
  toolContext: {} as ToolContext,
  models: ['m1'],
  cascade: false,
  maxTurns: 5,
  maxTokens: 100,
  call,
  signal: new AbortController().signal,
  resume,
});

describe('the run journal (runtime/journal.ts, engine.ts)', () => {
  it('stores the answer before any tool runs, each tool with effects before it starts, and the results after', async () => {
    const { call } = scriptedModel([[text('a'), use('t1', 'look'), use('t2', 'file'), use('t3', 'save')], [text('b')]]);
    const { tools, ran } = recordingTools();
    const journals: RunJournal[] = [];
    const r = await createBuiltinEngine().run(input(call, tools), hooks(journals));
    expect(r).toMatchObject({ status: 'succeeded', turns: 2, text: 'a\n\nb' });
    expect(ran).toEqual(['look', 'file', 'save']);
    expect(journals.map((j) => [j.pending?.results.length ?? null, j.pending?.started?.name ?? null])).toEqual([
      [0, null], // the answer, before `look` (a read tool is not recorded as started)
      [1, 'file'], // before the write tool
      [2, null], // after it
      [2, 'save'], // before the idempotent tool
      [null, null], // after the turn's last tool: the results are a message
    ]);
    expect(journals[0]).toMatchObject({ turns: 1, texts: ['a'], added: [{ role: 'assistant' }] });
    expect(journals.at(-1)!.added).toHaveLength(2);
  });

  it('resumes after the last completed step: no answered model call is made again, done tools are not rerun', async () => {
    const first = scriptedModel([[text('a'), use('t1', 'look'), use('t2', 'file'), use('t3', 'save')]]);
    const { tools, ran } = recordingTools();
    const journals: RunJournal[] = [];
    // The first execution is cut right after `file` ran and its result was stored (journal 3).
    await createBuiltinEngine()
      .run(input(first.call, tools), {
        ...hooks(journals),
        checkpoint: async (j) => {
          journals.push(structuredClone(j));
          if (journals.length === 3) throw new Error('killed');
        },
      })
      .catch(() => {});
    expect(ran).toEqual(['look', 'file']);
    const cut = journals[2];
    expect(replayDecision({ journal: cut, turns: cut.turns, replays: 0 })).toEqual({ action: 'requeue' });

    const second = scriptedModel([[text('b')]]);
    ran.length = 0;
    const r = await createBuiltinEngine().run(input(second.call, tools, cut), hooks([]));
    expect(r).toMatchObject({ status: 'succeeded', turns: 2, text: 'a\n\nb' });
    expect(ran).toEqual(['save']); // only the tool not done yet
    expect(second.requests).toHaveLength(1); // the answered call is not made again
    const convo = second.requests[0].messages;
    expect(convo.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect((convo[2].content as Array<{ tool_use_id: string }>).map((b) => b.tool_use_id)).toEqual(['t1', 't2', 't3']);
  });

  it('a write tool cut while running is not repeated: the replay rule fails the run with the reason', async () => {
    const started: RunJournal = {
      v: 1,
      added: [{ role: 'assistant', content: [use('t1', 'file')] }],
      texts: [],
      toolCalls: [],
      turns: 1,
      tier: 0,
      pending: {
        uses: [{ id: 't1', name: 'file', input: {} }],
        results: [],
        started: { id: 't1', name: 'file', effect: 'write' },
      },
    };
    expect(replayDecision({ journal: started, turns: 1, replays: 0 })).toMatchObject({
      action: 'fail',
      error: 'interrupted_side_effect',
      message: expect.stringContaining('file'),
    });
    // The engine refuses it too, should such a journal be resumed.
    const { tools, ran } = recordingTools();
    const r = await createBuiltinEngine().run(input(scriptedModel([]).call, tools, started), hooks([]));
    expect(r).toMatchObject({ status: 'failed', error: { code: 'interrupted' } });
    expect(ran).toEqual([]);
    // An idempotent one is run again.
    const again: RunJournal = {
      ...started,
      added: [{ role: 'assistant', content: [use('t1', 'save')] }],
      pending: {
        uses: [{ id: 't1', name: 'save', input: {} }],
        results: [],
        started: { id: 't1', name: 'save', effect: 'idempotent' },
      },
    };
    expect(replayDecision({ journal: again, turns: 1, replays: 0 })).toEqual({ action: 'requeue' });
    const r2 = await createBuiltinEngine().run(input(scriptedModel([[text('done')]]).call, tools, again), hooks([]));
    expect(r2).toMatchObject({ status: 'succeeded', turns: 2 });
    expect(ran).toEqual(['save']);
  });

  it('without a journal a run is requeued only before its first turn; a run interrupted too often fails', () => {
    expect(replayDecision({ journal: null, turns: 0, replays: 0 })).toEqual({ action: 'requeue' });
    expect(replayDecision({ journal: null, turns: 2, replays: 0 })).toMatchObject({
      action: 'fail',
      error: 'interrupted',
    });
    expect(replayDecision({ journal: { v: 2 }, turns: 0, replays: 0 })).toEqual({ action: 'requeue' });
    expect(replayDecision({ journal: null, turns: 0, replays: 3 })).toMatchObject({
      action: 'fail',
      error: 'interrupted',
      message: expect.stringContaining('4 times'),
    });
  });
});
