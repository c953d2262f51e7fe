/**
 * Where the server's log lines go (docs/configuration.md, `LOG_FLUSH_MS`): standard output, written so that what
 * the process logged survives its being killed (`kill -9`, the OOM killer) without a write system call per line.
 *
 * - A warning, an error or a fatal line is written at once, synchronously, together with every line before it
 *   (order kept): the lines that explain a failure are on disk before the next statement runs.
 * - Other lines are collected and written synchronously when 4 KiB have gathered or `flushMs` passed, whichever
 *   comes first: a kill loses at most the last `flushMs` of info lines. `flushMs` 0 writes every line at once.
 * - At exit (`flushSync`) whatever is left is written.
 *
 * Writing happens on the calling thread (pino's destination, sonic-boom, in synchronous mode): an asynchronous
 * write still in the thread pool when the process is killed would be lost, which is what this avoids. The cost
 * was measured on the authenticated-request benchmark (bench/auth-me.ts; docs/ARCHITECTURE.md, Logging).
 *
 * sonic-boom gathers the lines as buffers (its `contentMode: 'buffer'`), each line encoded once: in its default
 * text mode it appends each line to one growing string and measures that string's UTF-8 length on every line
 * (flattening it again each time), then encodes the gathered text twice per write (for the write, and again to
 * find what was written), ~1 µs per access line more (bench/README.md, "Auth-me", sixth pass).
 */
import pino from 'pino';

/** Bytes of info lines collected before they are written. */
const BUFFER_BYTES = 4096;
/** pino's numeric level of `warn`. */
const WARN = 40;

/** A pino destination with its own flush (`flushSync` at exit; `stop` ends the timer). */
export interface LogDestination {
  write(line: string): void;
  flushSync(): void;
  stop(): void;
}

/**
 * The destination over file descriptor `fd` (1: standard output).
 * @param flushMs longest time an info line waits before it is written (ms); 0 writes each line at once.
 */
export function createLogDestination(opts: { fd?: number; flushMs: number }): LogDestination {
  const boom = pino.destination({
    dest: opts.fd ?? 1,
    sync: true,
    minLength: opts.flushMs > 0 ? BUFFER_BYTES : 0,
    contentMode: 'buffer',
  });
  // In buffer mode sonic-boom's `write` takes a Buffer (its types declare only the text mode's string).
  const writeBuffer = boom.write.bind(boom) as unknown as (data: Buffer) => boolean;
  let waiting = false;
  const timer =
    opts.flushMs > 0
      ? setInterval(() => {
          if (!waiting) return;
          waiting = false;
          boom.flush();
        }, opts.flushMs)
      : undefined;
  timer?.unref();
  // pino sets `lastLevel` on a destination that asks for it before each write (`pino.metadata`).
  const dest = {
    [Symbol.for('pino.metadata')]: true,
    lastLevel: 0,
    write(line: string) {
      writeBuffer(Buffer.from(line));
      if (opts.flushMs > 0) {
        if (dest.lastLevel >= WARN) {
          waiting = false;
          boom.flush();
        } else waiting = true;
      }
    },
    flushSync() {
      boom.flushSync();
    },
    stop() {
      if (timer) clearInterval(timer);
    },
  };
  return dest;
}
