import { describe, expect, it } from 'vitest';
import { lineDiff, MAX_LINES } from './diff';

describe('line diff', () => {
  it('keeps common lines and marks removed and added ones in order', () => {
    expect(lineDiff('a\nb\nc', 'a\nB\nc\nd')).toEqual([
      { op: ' ', text: 'a' },
      { op: '-', text: 'b' },
      { op: '+', text: 'B' },
      { op: ' ', text: 'c' },
      { op: '+', text: 'd' },
    ]);
  });
  it('a new file is all added; a very long one is not compared', () => {
    expect(lineDiff('', 'x\ny')).toEqual([
      { op: '+', text: 'x' },
      { op: '+', text: 'y' },
    ]);
    const long = Array.from({ length: MAX_LINES + 1 }, (_, i) => String(i)).join('\n');
    const d = lineDiff(long, 'z');
    expect(d.filter((l) => l.op === '-')).toHaveLength(MAX_LINES + 1);
    expect(d.at(-1)).toEqual({ op: '+', text: 'z' });
  });
});
