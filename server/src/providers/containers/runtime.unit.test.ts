import { describe, expect, it } from 'vitest';
import { orderedInput } from './runtime.ts';

describe('orderedInput', () => {
  it('holds input that follows a resize until the resize is applied, and keeps the order of everything', async () => {
    const seen: string[] = [];
    const pending: Array<() => void> = [];
    const shell = orderedInput(
      (d) => seen.push(`write ${String(d)}`),
      (cols, rows) =>
        new Promise<void>((resolve) =>
          pending.push(() => {
            seen.push(`size ${cols}x${rows}`);
            resolve();
          }),
        ),
    );
    shell.write('a');
    shell.resize(100, 30);
    shell.write('b');
    shell.resize(120, 40);
    shell.write('c');
    expect(seen).toEqual(['write a']);
    await new Promise((r) => setTimeout(r, 0));
    pending.shift()!();
    await new Promise((r) => setTimeout(r, 0));
    expect(seen).toEqual(['write a', 'size 100x30', 'write b']);
    pending.shift()!();
    await new Promise((r) => setTimeout(r, 0));
    expect(seen).toEqual(['write a', 'size 100x30', 'write b', 'size 120x40', 'write c']);
    // Nothing pending: input goes at once.
    shell.write('d');
    expect(seen.at(-1)).toBe('write d');
  });
});
