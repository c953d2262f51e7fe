/**
 * A run's journal (docs/ARCHITECTURE.md, "Crash recovery and instance leases"): what a running agent run has done
 * so far, stored on its row after every step that must not be repeated, so a run taken back from a dead or
 * stopping instance resumes after its last completed step. Pure rules, no I/O.
 *
 * Steps and what is written before the next one starts:
 *  1. a model call answered → the answer (and the tool calls it asked for, `pending.uses`);
 *  2. before a tool that has effects (`effect` not `read`) → the tool as `pending.started`;
 *  3. after that tool → its result in `pending.results`; after the turn's last tool → the results as a message.
 * A model call cut by a crash is made again (its reservation was charged); a completed call never is. A tool
 * found started without a result ran, or may have: a `write` tool is not repeated (the run fails with that
 * reason), an `idempotent` one is run again, a `read` one is never recorded as started.
 */
import type { LlmContent, LlmMessage } from '../models/model-gateway.ts';
import type { ToolResultPreview } from './tool-result.ts';

/** What running a tool again does: nothing (`read`), the same state (`idempotent`), or more effects (`write`). */
export type ToolEffect = 'read' | 'idempotent' | 'write';

/** A tool call as the run lists it (`tool_calls`). */
export interface JournalToolCall {
  turn: number;
  tool: string;
  is_error: boolean;
  /** The input, redacted, cut at 200 characters (tool-result.ts). */
  summary: string;
  /** The result the model got, redacted and bounded (tool-result.ts); absent on runs recorded before it was kept. */
  result?: ToolResultPreview;
}

/** A tool call the model asked for. */
export interface JournalToolUse {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** The engine's state after its last completed step. */
export interface RunJournal {
  v: 1;
  /** Messages the engine added after the conversation it was given (answers, tool results). */
  added: LlmMessage[];
  /** The text of every kept turn. */
  texts: string[];
  toolCalls: JournalToolCall[];
  /** Turns kept. */
  turns: number;
  /** The cascade tier of the next model call. */
  tier: number;
  /** The tool calls of the last answer while they run. */
  pending?: {
    uses: JournalToolUse[];
    /** Results of the tools done so far, in the order of `uses`. */
    results: LlmContent[];
    /** The tool with effects that was started and has no result yet. */
    started?: { id: string; name: string; effect: ToolEffect };
  };
}

/** Times a run may be taken back and queued again; the next interruption fails it (a run that kills its process). */
export const MAX_REPLAYS = 3;

/** What to do with a run whose instance died. */
export type ReplayDecision = { action: 'requeue' } | { action: 'fail'; error: string; message: string };

/**
 * The replay rule for a running run whose instance is gone (module header).
 * @param run.journal the stored journal (null: none written yet); `turns` its turns; `replays` times already
 *   taken back.
 */
export function replayDecision(run: { journal: unknown; turns: number; replays: number }): ReplayDecision {
  if (run.replays >= MAX_REPLAYS)
    return {
      action: 'fail',
      error: 'interrupted',
      message: `The service stopped during this run ${run.replays + 1} times; it was not started again. Retry it.`,
    };
  const j = asJournal(run.journal);
  if (!j)
    return run.turns === 0
      ? { action: 'requeue' }
      : {
          action: 'fail',
          error: 'interrupted',
          message: 'The service stopped during this run and no record of its steps was kept; retry it.',
        };
  const started = j.pending?.started;
  if (started && started.effect === 'write')
    return {
      action: 'fail',
      error: 'interrupted_side_effect',
      message: `The service stopped while the tool ${started.name} was running; it may have taken effect, so the run was not repeated. Check its result, then retry the run.`,
    };
  return { action: 'requeue' };
}

/** A stored journal, or null when `v` is missing or unknown. */
export function asJournal(v: unknown): RunJournal | null {
  const j = (typeof v === 'string' ? safeParse(v) : v) as RunJournal | null;
  return j && typeof j === 'object' && j.v === 1 && Array.isArray(j.added) ? j : null;
}

function safeParse(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return null;
  }
}
