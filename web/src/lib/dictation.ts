/** Pure text logic of voice dictation (tested in web/src/voice.test.tsx). */

/**
 * The field's new value with dictated `text` between `before` and `after` (the text around the caret or the
 * selection), with a space on each side where the neighbour is not already a space or a line break.
 * @returns the value and the caret position just after the inserted text.
 */
export function joinDictation(before: string, text: string, after: string): { value: string; caret: number } {
  const t = text.trim();
  if (!t) return { value: before + after, caret: before.length };
  const lead = before && !/\s$/.test(before) ? ' ' : '';
  const trail = after && !/^\s/.test(after) ? ' ' : '';
  const head = before + lead + t;
  return { value: head + trail + after, caret: head.length };
}
