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
