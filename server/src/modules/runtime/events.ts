/**
 * In-process events of runs (text deltas, tool results, escalations, the end), for streams served by
 * this process. Only what the run's own process sees: a stream whose run executes on another instance
 * falls back to the run row (chat.service.ts polls it), so nothing depends on this for correctness.
 */
export type RunEvent =
  | { type: 'text_delta'; delta: string }
  | { type: 'tool_result'; tool: string; is_error: boolean; [k: string]: unknown }
  | { type: 'cascade_escalated'; class: string; from: string; to: string }
  | { type: 'end'; status: string };

export interface RunEvents {
  /** Listen to one run; returns the unsubscribe function. */
  subscribe(runId: number, fn: (e: RunEvent) => void): () => void;
  publish(runId: number, e: RunEvent): void;
}

export function createRunEvents(): RunEvents {
  const listeners = new Map<number, Set<(e: RunEvent) => void>>();
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
      const set = listeners.get(runId);
      if (set) for (const fn of [...set]) fn(e);
    },
  };
}
