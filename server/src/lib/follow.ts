/**
 * The one live-stream helper (docs/ARCHITECTURE.md, "Live streams"): every progress and log stream of the
 * service follows something that changes elsewhere — a row written by a job on any instance, a run executing on
 * another instance, a container's output — the same way:
 *
 *  1. subscribe at once to what announces a change (a bus channel, the run events), so nothing announced between
 *     the subscription and the first read is lost;
 *  2. read the current state (the row) at the start, on every announcement that asks for it, and again after
 *     `pollMs` without news, so an announcement the bus lost (it is not durable) costs at most `pollMs`;
 *  3. drop what is not news (the same state read twice, a line already sent);
 *  4. end after the last state (`isDone`), after `timeoutMs`, or as soon as the client leaves: `return()` on the
 *     stream wakes it at once, even while it waits, and unsubscribes (also when it was never read).
 *
 * The stream is an async generator of the events to send (`emit` turns an item into them); the SSE writer
 * (`http/sse.ts`) writes them.
 */

/** How a followed stream ended by itself (a stream the client left ends silently). */
export type FollowEnd = 'done' | 'timeout';

export interface FollowOptions<T, E> {
  /**
   * Subscribe to what announces changes; called once, at once. `notify(item)` queues an item that came with the
   * announcement; `notify()` asks for a read. @returns the unsubscribe function.
   */
  listen?: (notify: (item?: T) => void) => () => void;
  /** Read the current state: an item, several (in order), or `undefined` for nothing new. */
  read?: () => Promise<T | T[] | undefined>;
  /** Read once before waiting for announcements (default: true when `read` is given). */
  readFirst?: boolean;
  /** Whether `item` is the last one: it is sent, then the stream ends (`end('done', item)`). */
  isDone: (item: T) => boolean;
  /** Whether `item` is news after `last`, the previous item passed on (default: its JSON text differs). */
  isNew?: (item: T, last: T | undefined) => boolean;
  /**
   * The items are a log in order (`isNew` compares their position): an announcement that comes while a read runs
   * is no older than what the read returns, so the read's items are passed on first (default false: a state read
   * is taken as it comes, after what was announced before it).
   */
  ordered?: boolean;
  /** Read again after this many ms without news (default 1000); `null`: read only when notified. */
  pollMs?: number | null;
  /** End after this many ms when no last item came (`end('timeout', last)`). */
  timeoutMs?: number;
  /** The events to send for an item (none, one or several). */
  emit: (item: T) => E[] | Promise<E[]>;
  /** The events to send when the stream ends by itself (not when the client left). */
  end?: (how: FollowEnd, last: T | undefined) => E[] | Promise<E[]>;
}

const READ = Symbol('read');

/**
 * Follow a changing state as a stream of events (module header).
 * @returns an async generator of `emit`'s events; its `return()` ends it at once and unsubscribes.
 */
export function follow<T, E>(o: FollowOptions<T, E>): AsyncGenerator<E, void, undefined> {
  const queue: Array<T | typeof READ> = [];
  let wake: (() => void) | null = null;
  let closed = false;
  const notify = (item?: T) => {
    queue.push(item === undefined ? READ : item);
    wake?.();
  };
  const unlisten = o.listen?.(notify) ?? (() => {});
  const started = Date.now();
  const pollMs = o.pollMs === undefined ? 1000 : o.pollMs;
  const isNew = o.isNew ?? ((item: T, last: T | undefined) => JSON.stringify(item) !== JSON.stringify(last));

  /** Wait for an announcement, the poll interval or the deadline. @returns true when the poll is due. */
  const pause = () =>
    new Promise<boolean>((resolve) => {
      const left = o.timeoutMs === undefined ? Infinity : o.timeoutMs - (Date.now() - started);
      const ms = Math.min(pollMs ?? Infinity, left);
      const timer = Number.isFinite(ms) ? setTimeout(() => resolve(true), Math.max(0, ms)) : undefined;
      timer?.unref();
      wake = () => {
        if (timer) clearTimeout(timer);
        resolve(false);
      };
    }).finally(() => {
      wake = null;
    });

  async function* run(): AsyncGenerator<E, void, undefined> {
    let last: T | undefined;
    const readInto = async () => {
      const got = await o.read!();
      if (got === undefined) return;
      const items = Array.isArray(got) ? got : [got];
      if (o.ordered) queue.unshift(...items);
      else queue.push(...items);
    };
    try {
      if (o.read && (o.readFirst ?? true)) await readInto();
      for (;;) {
        let readAsked = false;
        while (queue.length && !closed) {
          const item = queue.shift()!;
          if (item === READ) {
            readAsked = true;
            continue;
          }
          if (!isNew(item, last)) continue;
          last = item;
          for (const e of await o.emit(item)) yield e;
          if (o.isDone(item)) {
            if (o.end) for (const e of await o.end('done', item)) yield e;
            return;
          }
        }
        if (closed) return;
        if (o.timeoutMs !== undefined && Date.now() - started >= o.timeoutMs) {
          if (o.end) for (const e of await o.end('timeout', last)) yield e;
          return;
        }
        if (!readAsked) {
          const pollDue = await pause();
          if (closed) return;
          readAsked = pollDue && !queue.length;
        }
        if (readAsked && o.read) await readInto();
      }
    } finally {
      stop();
    }
  }

  const stop = () => {
    if (closed) return;
    closed = true;
    unlisten();
    wake?.();
  };
  const gen = run();
  const returnOf = gen.return.bind(gen);
  gen.return = (value) => {
    stop();
    return returnOf(value);
  };
  return gen;
}
