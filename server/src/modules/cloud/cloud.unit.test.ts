/** Pure rules of the cloud area: terminal output → log lines, terminal control frames, the cloud plans. */
import { describe, expect, it } from 'vitest';
import { includesCloud } from '../usage/usage.rules.ts';
import { lineBudget, parseControl } from './cloud.rules.ts';
import { cleanLine, lineSplitter } from './cloud.output.ts';

describe('log lines from pty output', () => {
  it('strips escape sequences, keeps the last redraw of a line, drops control characters', () => {
    expect(cleanLine('\x1b[?2004huser@box:~$ echo hi\r')).toBe('user@box:~$ echo hi');
    expect(cleanLine('\x1b[?2004l\rhi\r')).toBe('hi');
    expect(cleanLine('\x1b]0;title\x07\x1b[1;32mgreen\x1b[0m')).toBe('green');
    expect(cleanLine('a\x00b\x07c')).toBe('abc');
    expect(cleanLine('x'.repeat(5000))).toHaveLength(2000);
  });

  it('splits lines across chunks, UTF-8 sequences included, and cuts a runaway line', () => {
    const s = lineSplitter();
    const snowman = Buffer.from('☃');
    expect(s.push(Buffer.concat([Buffer.from('one\ntw'), snowman.subarray(0, 1)]))).toEqual(['one']);
    expect(s.push(Buffer.concat([snowman.subarray(1), Buffer.from('o\nthree')]))).toEqual(['tw☃o']);
    expect(s.flush()).toEqual(['three']);
    const big = lineSplitter();
    expect(big.push(Buffer.from('y'.repeat(9000))).length).toBeGreaterThan(0);
  });
});

describe('terminal control frames', () => {
  it('reads resize and input frames, clamps sizes, leaves anything else as keystrokes', () => {
    expect(parseControl('{"type":"resize","cols":120,"rows":40}')).toEqual({ type: 'resize', cols: 120, rows: 40 });
    expect(parseControl('{"type":"resize","cols":99999,"rows":0}')).toEqual({ type: 'resize', cols: 1000, rows: 1 });
    expect(parseControl('{"type":"input","data":"ls\\n"}')).toEqual({ type: 'input', data: 'ls\n' });
    expect(parseControl('{"type":"resize","cols":"a"}')).toBeUndefined();
    expect(parseControl('{not json')).toBeUndefined();
    expect(parseControl('ls -la\n')).toBeUndefined();
  });
});

describe('cloud plans', () => {
  it('cloud and starter_cloud include a container; admins and beta bypass; others do not', () => {
    expect(includesCloud({ plan: 'cloud', role: 'user' })).toBe(true);
    expect(includesCloud({ plan: 'starter_cloud', role: 'user' })).toBe(true);
    expect(includesCloud({ plan: 'beta', role: 'user' })).toBe(true);
    expect(includesCloud({ plan: 'free', role: 'admin' })).toBe(true);
    for (const plan of ['free', 'min', 'max', 'starter']) expect(includesCloud({ plan, role: 'user' })).toBe(false);
  });
});

describe('lineBudget', () => {
  it('admits a burst, then perSecond lines a second, and counts what it dropped once', () => {
    const b = lineBudget(10, 100, 0);
    expect(b.take(150, 0)).toBe(100);
    expect(b.take(5, 0)).toBe(0);
    expect(b.dropped()).toBe(55);
    expect(b.dropped()).toBe(0);
    expect(b.take(50, 2000)).toBe(20);
    b.drop(3);
    expect(b.dropped()).toBe(33);
    expect(b.full(2000)).toBe(false);
    expect(b.full(20_000)).toBe(true);
  });
});
