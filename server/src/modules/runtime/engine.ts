/**
 * Agent engines. `AgentEngine` is the seam: the built-in engine below runs the model loop in this
 * process; an external agent CLI in a terminal session (inside the user's container) can be added
 * beside it behind the same interface.
 *
 * The built-in loop (docs/ARCHITECTURE.md, Projects, workers, plan limits and onboarding): model call → tool calls →
 * tool results, at most `maxTurns` model calls that were kept. With a cascade (optimize mode) a call
 * that fails with an `EscalationClass` is repeated on the next model of the plan and does not count
 * as a turn; the failed call's tokens are still metered. Every model call goes through the run's metered call
 * (`AgentRunInput.call`: the model gateway bound to the run's payer), which reserves, records and may stop the run.
 */
import { AppError } from '../../http/errors.ts';
import {
  ModelError,
  textOf,
  type LlmContent,
  type LlmMessage,
  type LlmResponse,
  type LlmTool,
} from '../models/model-gateway.ts';
import { missingRequired, toLlmTools, type AgentTool, type ToolContext } from './tools.ts';
import type { JournalToolCall, JournalToolUse, RunJournal } from './journal.ts';
import { previewToolResult, summarizeToolInput } from './tool-result.ts';

/** Failure classes that make a cascade escalate to the next tier. */
export type EscalationClass =
  'overloaded' | 'rate_limit' | 'server_error' | 'timeout' | 'max_tokens' | 'malformed_tool_call' | 'empty_answer';

/** A hook asks the run to stop (cancel, budget). */
export class RunStop extends Error {
  constructor(
    readonly code: 'cancelled' | 'token_budget_exceeded' | 'interrupted' | 'waiting_approval',
    message: string,
  ) {
    super(message);
  }
}

/** A tool call as the run lists it (`tool_calls`; journal.ts). */
export type ToolCallRecord = JournalToolCall;

/**
 * One metered model call of a run (kept or escalated): reserved, made, recorded. Streams text deltas to `onText`.
 * @throws RunStop (budget spent), `ModelError` (the provider failed; kind `aborted` when cancelled).
 */
export type ModelCaller = (
  req: {
    model: string;
    system: string;
    messages: LlmMessage[];
    tools: LlmTool[];
    maxTokens: number;
    signal: AbortSignal;
  },
  onText: (delta: string) => void,
) => Promise<LlmResponse>;

export interface EngineHooks {
  onText(delta: string): void;
  onToolResult(ev: { turn: number; tool: string; is_error: boolean; data?: Record<string, unknown> }): void;
  /** Before every model call of turn `turn` (1-based): heartbeat, cancel and budget checks. May throw RunStop. */
  beforeTurn(turn: number): Promise<void>;
  onEscalate(ev: { from: string; to: string; class: EscalationClass; turn: number }): Promise<void>;
  /**
   * After every step that must not be repeated (journal.ts): store the journal. May throw RunStop (the run is no
   * longer this process's). Without it nothing is stored and a crashed run starts over. A journal without `pending`
   * (a turn's tools done) is always followed by the next `beforeTurn` or the end of the run, with nothing in between:
   * a hook may store it with that turn's heartbeat, in one write (runtime.execution.ts).
   */
  checkpoint?(journal: RunJournal): Promise<void>;
  /**
   * Before a tool call of the model runs (docs/ARCHITECTURE.md, Approvals): `run` it, `refuse` it (the model gets
   * `message` as an error result and the tool does not run), or `wait` (the run stops with status
   * `waiting_approval` after storing its journal; resumed, it asks again for the same call). Without it every
   * call runs.
   */
  approval?(use: JournalToolUse): Promise<ApprovalGate>;
}

/** What the approval hook decided for one tool call. */
export type ApprovalGate = { action: 'run' } | { action: 'refuse'; message: string } | { action: 'wait' };

/** The run status a hook's stop ends in. */
const stopStatus = (code: RunStop['code']): AgentRunResult['status'] =>
  code === 'cancelled' ? 'cancelled' : code === 'waiting_approval' ? 'waiting_approval' : 'failed';

export interface AgentRunInput {
  system: string;
  /** The conversation so far, ending with the user's message. */
  messages: LlmMessage[];
  tools: AgentTool[];
  toolContext: ToolContext;
  /** Models to use, in cascade order; without `cascade` only the first. */
  models: string[];
  cascade: boolean;
  maxTurns: number;
  /** Output-token bound per model call (the call may be granted fewer by the budget). */
  maxTokens: number;
  /** The run's metered model call. */
  call: ModelCaller;
  signal: AbortSignal;
  /** Resume after the last completed step of an earlier execution of this run (its stored journal). */
  resume?: RunJournal | null;
}

export interface AgentRunResult {
  /** `waiting_approval`: stopped before a tool call that waits for a person (its journal is stored). */
  status: 'succeeded' | 'failed' | 'cancelled' | 'waiting_approval';
  /** The reply: the text of every kept turn, joined. */
  text: string;
  turns: number;
  /** The model of the last call. */
  model: string;
  error?: { code: string; message: string };
  toolCalls: ToolCallRecord[];
  /** Per kept turn: wall time of the turn and the part spent inside the model call (ms). */
  turnTimings: Array<{ total_ms: number; llm_ms: number }>;
}

export interface AgentEngine {
  readonly name: string;
  /** Run one agent conversation to its end. Never throws for run failures; they are in the result. */
  run(input: AgentRunInput, hooks: EngineHooks): Promise<AgentRunResult>;
}

/** The escalation class of a failed call, or null when escalating would not help. */
export function classOfError(err: unknown): EscalationClass | null {
  if (!(err instanceof ModelError)) return null;
  return (
    (
      { overloaded: 'overloaded', rate_limit: 'rate_limit', server: 'server_error', timeout: 'timeout' } as Record<
        string,
        EscalationClass
      >
    )[err.kind] ?? null
  );
}

/** The built-in engine: the model loop in this process, over the run's metered call. */
export function createBuiltinEngine(): AgentEngine {
  return {
    name: 'builtin',
    async run(input, hooks) {
      const r = input.resume;
      const messages: LlmMessage[] = [...input.messages, ...(r?.added ?? [])];
      const byName = new Map(input.tools.map((t) => [t.name, t]));
      const llmTools = toLlmTools(input.tools);
      const texts: string[] = [...(r?.texts ?? [])];
      const toolCalls: ToolCallRecord[] = [...(r?.toolCalls ?? [])];
      const turnTimings: AgentRunResult['turnTimings'] = [];
      let tier = Math.min(r?.tier ?? 0, input.models.length - 1);
      let turns = r?.turns ?? 0;
      const model = () => input.models[tier];
      /** The journal after the last completed step (`pending`: the tool calls under way). */
      const journal = (pending?: RunJournal['pending']): RunJournal => ({
        v: 1,
        added: messages.slice(input.messages.length),
        texts: [...texts],
        toolCalls: [...toolCalls],
        turns,
        tier,
        ...(pending ? { pending } : {}),
      });
      const checkpoint = async (pending?: RunJournal['pending']) => {
        if (hooks.checkpoint) await hooks.checkpoint(journal(pending));
      };
      /**
       * Run the tool calls of the last answer from `results.length` on (a resumed run may have some done), stored
       * around each tool with effects (journal.ts), then add their results to the conversation.
       */
      const runTools = async (uses: JournalToolUse[], results: LlmContent[], again?: string) => {
        for (let i = results.length; i < uses.length; i++) {
          const u = uses[i];
          const tool = byName.get(u.name);
          const effect = tool ? (tool.effect ?? 'write') : 'read';
          if (effect === 'write' && again === u.id)
            throw new RunStop('interrupted', `The tool ${u.name} was interrupted and is not repeated.`);
          const gate: ApprovalGate =
            tool && hooks.approval ? await hooks.approval({ id: u.id, name: u.name, input: u.input ?? {} }) : RUN;
          if (gate.action === 'wait') {
            // Stored up to this call: resumed after the decision, the run asks again and never calls the model first.
            await checkpoint({ uses, results });
            throw new RunStop('waiting_approval', `The call of ${u.name} waits for a person's approval.`);
          }
          let outcome: Awaited<ReturnType<typeof runTool>>;
          if (gate.action === 'refuse') outcome = { content: gate.message, is_error: true };
          else {
            if (effect !== 'read') await checkpoint({ uses, results, started: { id: u.id, name: u.name, effect } });
            outcome = await runTool(tool, u.input ?? {}, { ...input.toolContext, callId: u.id });
          }
          toolCalls.push({
            turn: turns,
            tool: u.name,
            is_error: !!outcome.is_error,
            summary: summarizeToolInput(u.input ?? {}),
            result: previewToolResult(outcome.content),
          });
          hooks.onToolResult({ turn: turns, tool: u.name, is_error: !!outcome.is_error, data: outcome.data });
          results.push({
            type: 'tool_result',
            tool_use_id: u.id,
            content: outcome.content,
            ...(outcome.is_error ? { is_error: true } : {}),
          });
          if (effect !== 'read' && i < uses.length - 1) await checkpoint({ uses, results });
        }
        messages.push({ role: 'user', content: results });
        await checkpoint();
      };
      const done = (status: AgentRunResult['status'], error?: AgentRunResult['error']): AgentRunResult => ({
        status,
        text: texts.join('\n\n'),
        turns,
        model: model(),
        error,
        toolCalls,
        turnTimings,
      });
      const canEscalate = () => input.cascade && tier + 1 < input.models.length;
      const escalate = async (cls: EscalationClass) => {
        await hooks.onEscalate({ from: model(), to: input.models[tier + 1], class: cls, turn: turns + 1 });
        tier++;
      };

      if (r?.pending) {
        // Resumed between the tool calls of a turn: finish them first.
        try {
          await runTools(r.pending.uses, [...r.pending.results], r.pending.started?.id);
        } catch (err) {
          if (err instanceof RunStop) return done(stopStatus(err.code), { code: err.code, message: err.message });
          throw err;
        }
      }
      for (;;) {
        if (turns >= input.maxTurns)
          return done('failed', {
            code: 'max_turns_reached',
            message: `The run stopped after ${input.maxTurns} turns (max_turns).`,
          });
        const turnStart = performance.now();
        let llmMs: number;
        try {
          await hooks.beforeTurn(turns + 1);
          if (input.signal.aborted) throw new RunStop('cancelled', 'The run was cancelled.');
          let turnText = '';
          const callStart = performance.now();
          let res: LlmResponse;
          try {
            res = await input.call(
              {
                model: model(),
                system: input.system,
                messages,
                tools: llmTools,
                maxTokens: input.maxTokens,
                signal: input.signal,
              },
              (delta) => {
                turnText += delta;
                hooks.onText(delta);
              },
            );
          } catch (err) {
            if (err instanceof RunStop) throw err;
            if (input.signal.aborted || (err instanceof ModelError && err.kind === 'aborted'))
              return done('cancelled', { code: 'cancelled', message: 'The run was cancelled.' });
            const cls = classOfError(err);
            if (cls && canEscalate()) {
              await escalate(cls);
              continue;
            }
            if (!(err instanceof ModelError)) throw err;
            return done('failed', { code: `llm_${err.kind}`, message: err.providerMessage || err.message });
          } finally {
            llmMs = performance.now() - callStart;
          }
          const uses = res.content.filter((b): b is Extract<LlmContent, { type: 'tool_use' }> => b.type === 'tool_use');
          const text = textOf(res) || turnText;
          const malformed = uses.some(
            (u) => !byName.has(u.name) || missingRequired(byName.get(u.name)!, u.input ?? {}).length > 0,
          );
          const cls: EscalationClass | null =
            res.stop_reason === 'max_tokens'
              ? 'max_tokens'
              : !uses.length && !text.trim()
                ? 'empty_answer'
                : malformed
                  ? 'malformed_tool_call'
                  : null;
          if (cls && canEscalate()) {
            await escalate(cls);
            continue;
          }
          turns++;
          if (text.trim()) texts.push(text.trim());
          messages.push({ role: 'assistant', content: res.content });
          if (!uses.length) {
            turnTimings.push({ total_ms: performance.now() - turnStart, llm_ms: llmMs });
            return done('succeeded');
          }
          const asked = uses.map((u) => ({ id: u.id, name: u.name, input: u.input ?? {} }));
          // The answer is stored before any tool runs: a crash from here on never repeats this model call.
          await checkpoint({ uses: asked, results: [] });
          await runTools(asked, []);
          turnTimings.push({ total_ms: performance.now() - turnStart, llm_ms: llmMs });
        } catch (err) {
          if (err instanceof RunStop) return done(stopStatus(err.code), { code: err.code, message: err.message });
          throw err;
        }
      }
    },
  };
}

const RUN: ApprovalGate = { action: 'run' };

/** Run one tool; its failures become an `is_error` result the model can read. */
async function runTool(tool: AgentTool | undefined, input: Record<string, unknown>, ctx: ToolContext) {
  if (!tool) return { content: 'This tool does not exist here.', is_error: true };
  const missing = missingRequired(tool, input);
  if (missing.length) return { content: `Missing input: ${missing.join(', ')}.`, is_error: true };
  try {
    return await tool.run(ctx, input);
  } catch (err) {
    if (err instanceof AppError) return { content: err.message, is_error: true };
    return { content: `The tool ${tool.name} failed.`, is_error: true };
  }
}
