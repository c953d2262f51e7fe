import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { createLogDestination } from './log-destination.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'log-dest-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A logger over a fresh file, and the file's lines as written so far (what a kill would leave). */
function logTo(name: string, flushMs: number) {
  const file = path.join(dir, name);
  const fd = fs.openSync(file, 'a');
  const dest = createLogDestination({ fd, flushMs });
  const log = pino({ level: 'info' }, dest);
  const lines = () =>
    fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l).msg as string);
  return { log, dest, lines, close: () => (dest.stop(), fs.closeSync(fd)) };
}

describe('log lines survive a kill (lib/log-destination.ts)', () => {
  it('a warning is on disk when the call returns, with every info line before it, in order', () => {
    const l = logTo('warn.log', 60_000);
    l.log.info('first');
    l.log.info('second');
    expect(l.lines()).toEqual([]);
    l.log.warn('trouble');
    expect(l.lines()).toEqual(['first', 'second', 'trouble']);
    l.log.error('worse');
    expect(l.lines()).toEqual(['first', 'second', 'trouble', 'worse']);
    l.close();
  });

  it('info lines are on disk within the flush interval, or at once when 4 KiB gathered', async () => {
    const l = logTo('info.log', 50);
    l.log.info('quiet');
    expect(l.lines()).toEqual([]);
    await new Promise((r) => setTimeout(r, 200));
    expect(l.lines()).toEqual(['quiet']);
    for (let i = 0; i < 60; i++) l.log.info({ pad: 'x'.repeat(80) }, `bulk ${i}`);
    expect(l.lines().length).toBeGreaterThan(30); // written as the buffer filled, before any timer
    l.dest.flushSync();
    expect(l.lines()).toHaveLength(61);
    l.close();
  });

  it('with 0 every line is written at once', () => {
    const l = logTo('sync.log', 0);
    l.log.info('one');
    expect(l.lines()).toEqual(['one']);
    l.close();
  });
});
