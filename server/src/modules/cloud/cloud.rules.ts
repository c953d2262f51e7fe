/** The terminal socket's frames (cloud.routes.ts): control frames among keystrokes. */

const clamp = (n: number) => Math.max(1, Math.min(1000, n));

/** A terminal control frame: `{"type":"resize","cols","rows"}` or `{"type":"input","data"}`; else undefined. */
export function parseControl(
  text: string,
): { type: 'resize'; cols: number; rows: number } | { type: 'input'; data: string } | undefined {
  if (!text.startsWith('{')) return undefined;
  try {
    const m = JSON.parse(text) as { type?: unknown; cols?: unknown; rows?: unknown; data?: unknown };
    if (m.type === 'resize' && Number.isInteger(m.cols) && Number.isInteger(m.rows))
      return { type: 'resize', cols: clamp(m.cols as number), rows: clamp(m.rows as number) };
    if (m.type === 'input' && typeof m.data === 'string') return { type: 'input', data: m.data };
  } catch {
    // not a control frame
  }
  return undefined;
}

/**
 * The output budget of one user's container log (docs/configuration.md, Cloud sandbox caps): a token bucket of
 * `perSecond` lines a second holding at most `burst` lines. `take(n, now)` admits the first lines that fit and counts
 * the rest as dropped; `dropped()` hands over (and resets) the count of lines dropped since the last call.
 * Pure apart from the clock passed in (ms).
 */
export function lineBudget(perSecond: number, burst: number, now = Date.now()) {
  let tokens = burst;
  let at = now;
  let dropped = 0;
  return {
    take(n: number, t = Date.now()): number {
      tokens = Math.min(burst, tokens + ((t - at) / 1000) * perSecond);
      at = t;
      const ok = Math.max(0, Math.min(n, Math.floor(tokens)));
      tokens -= ok;
      dropped += n - ok;
      return ok;
    },
    /** Count lines dropped before they reached the budget (a full buffer). */
    drop(n: number): void {
      dropped += n;
    },
    dropped(): number {
      const d = dropped;
      dropped = 0;
      return d;
    },
    /** Whether the bucket is full again (the budget can be forgotten). */
    full(t = Date.now()): boolean {
      return dropped === 0 && tokens + ((t - at) / 1000) * perSecond >= burst;
    },
  };
}
