/**
 * Events of runs (text deltas, tool results, escalations, the end) for the streams that follow them. They go
 * over the event bus (lib/bus.ts, channel `run.event`): a stream served by one instance sees a run executing
 * on another as it happens, in the order the run published (one publisher per run; the bus keeps order).
 * Subscribers in this process get an event at once. The bus is not durable, so a stream keeps its fallback:
 * chat.service.ts also polls the run row and ends with the stored reply.
 */
import type { Bus } from '../../lib/bus.ts';

export type RunEvent =
  | { type: 'text_delta'; delta: string }
  | { type: 'tool_result'; tool: string; is_error: boolean; [k: string]: unknown }
  | { type: 'cascade_escalated'; class: string; from: string; to: string }
  | { type: 'approval_requested'; approval_id: number; tool: string }
  | { type: 'end'; status: string };

export interface RunEvents {
  /** Listen to one run (wherever it executes); returns the unsubscribe function. */
  subscribe(runId: number, fn: (e: RunEvent) => void): () => void;
  /** Tell every instance's listeners of run `runId` (this process's at once). */
  publish(runId: number, e: RunEvent): void;
}

/**
 * Run events over `bus`: one bus subscription for the process, dispatched to the listeners of each run here.
 */
export function createRunEvents(bus: Bus): RunEvents {
  const listeners = new Map<number, Set<(e: RunEvent) => void>>();
  bus.subscribe('run.event', ({ run, e }) => {
    const set = listeners.get(run);
    if (set) for (const fn of [...set]) fn(e as RunEvent);
  });
  return {
    subscribe(runId, fn) {
      let set = listeners.get(runId);
      if (!set) {
        set = new Set();
        listeners.set(runId, set);
      }
      set.add(fn);
      return () => {
        set!.delete(fn);
        if (!set!.size) listeners.delete(runId);
      };
    },
    publish(runId, e) {
      void bus.publish('run.event', { run: runId, e });
    },
  };
}
