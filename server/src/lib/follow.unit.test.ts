import { describe, expect, it } from 'vitest';
import { follow } from './follow.ts';

/** A tiny announcer standing in for a bus channel. */
function announcer<T>() {
  const subs = new Set<(item?: T) => void>();
  return {
    listen: (notify: (item?: T) => void) => {
      subs.add(notify);
      return () => void subs.delete(notify);
    },
    send: (item?: T) => [...subs].forEach((fn) => fn(item)),
    get count() {
      return subs.size;
    },
  };
}

describe('follow', () => {
  it('reads at the start and on announcements, drops repeated states, ends after the last one', async () => {
    const a = announcer<string>();
    const states = ['queued', 'queued', 'working', 'done'];
    let reads = 0;
    const stream = follow<string, string>({
      listen: a.listen,
      read: async () => states[Math.min(reads++, states.length - 1)],
      isDone: (s) => s === 'done',
      pollMs: null,
      emit: (s) => [s],
      end: (how, last) => [`end:${how}:${last}`],
    });
    expect(a.count).toBe(1);
    const seen: string[] = [];
    const reading = (async () => {
      for await (const e of stream) seen.push(e);
    })();
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 5));
      a.send();
    }
    await reading;
    expect(seen).toEqual(['queued', 'working', 'done', 'end:done:done']);
    expect(a.count).toBe(0);
  });

  it('keeps an ordered log whole when lines are announced while its tail is read', async () => {
    const a = announcer<number>();
    // The tail (lines 1–5) is read while lines 5 and 6 are announced: 5 is in both, 6 only on the bus.
    const stream = follow<number, number>({
      listen: a.listen,
      read: async () => {
        a.send(5);
        a.send(6);
        await new Promise((r) => setTimeout(r, 5));
        return [1, 2, 3, 4, 5];
      },
      ordered: true,
      pollMs: null,
      isNew: (n, last) => last === undefined || n > last,
      isDone: (n) => n === 7,
      emit: (n) => [n],
    });
    setTimeout(() => a.send(7), 20);
    const seen: number[] = [];
    for await (const e of stream) seen.push(e);
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('passes items that came with an announcement, and polls when the bus stays silent', async () => {
    const a = announcer<number>();
    let polled = 0;
    const stream = follow<number, number>({
      listen: a.listen,
      read: async () => (++polled === 1 ? undefined : 99),
      readFirst: false,
      pollMs: 20,
      isNew: () => true,
      isDone: (n) => n === 99,
      emit: (n) => [n],
    });
    setTimeout(() => a.send(1), 2);
    setTimeout(() => a.send(1), 4);
    const seen: number[] = [];
    for await (const n of stream) seen.push(n);
    expect(seen).toEqual([1, 1, 99]);
  });

  it('ends with a timeout event when nothing final comes', async () => {
    const stream = follow<string, string>({
      read: async () => 'waiting',
      isDone: () => false,
      pollMs: 5,
      timeoutMs: 30,
      emit: () => [],
      end: (how) => [how],
    });
    const seen: string[] = [];
    for await (const e of stream) seen.push(e);
    expect(seen).toEqual(['timeout']);
  });

  it('return() ends a waiting stream at once and unsubscribes, also one never read', async () => {
    const a = announcer<string>();
    const stream = follow<string, string>({
      listen: a.listen,
      read: async () => 'waiting',
      isDone: () => false,
      pollMs: null,
      emit: (s) => [s],
    });
    expect(await stream.next()).toEqual({ value: 'waiting', done: false });
    const pending = stream.next();
    const started = Date.now();
    await stream.return(undefined);
    expect(await pending).toEqual({ value: undefined, done: true });
    expect(Date.now() - started).toBeLessThan(100);
    expect(a.count).toBe(0);

    const b = announcer<string>();
    const unread = follow<string, string>({ listen: b.listen, isDone: () => true, emit: (s) => [s] });
    expect(b.count).toBe(1);
    await unread.return(undefined);
    expect(b.count).toBe(0);
  });
});
