/**
 * The event bus between instances (DESIGN: "An event bus interface has an in-process implementation and a
 * PostgreSQL LISTEN/NOTIFY one"). Several instances may serve one PostgreSQL database behind a load balancer;
 * what one of them changes or streams, the others learn through here:
 *  - `user.changed`: a user's auth columns changed (the auth hook's cache drops the row, http/auth.ts);
 *  - `run.event`: an event of an agent run (text delta, tool result, escalation, end) for chat streams served
 *    by another instance than the one executing the run (modules/runtime/events.ts);
 *  - `run.cancel`: stop a run now wherever it executes;
 *  - `jobs.sent`: jobs were queued, pollers everywhere look at once (jobs/queue.ts);
 *  - `messenger.bots`: a worker's bot was bound or unbound, its poller starts or stops within moments.
 *
 * Delivery: `publish` hands a message to this process's subscribers at once (synchronously, before it
 * returns), then to every other instance. The PostgreSQL bus sends `pg_notify` through the pool, in order
 * (one statement at a time; messages queued meanwhile go together in the next statement, which keeps their
 * order), and receives on ONE dedicated connection that LISTENs (reconnected with back-off; pinged every 30 s).
 * A message larger than NOTIFY's 8000-byte payload limit is sent as base64 parts and reassembled.
 * Messages are not durable: one sent while a listener is disconnected is lost to it, so every receiver that
 * keeps state (the user cache) clears it on `onGap`, which fires on every (re)connection, and does not trust it
 * while `live` is false; streams keep their own fallback (chat polls the run row).
 *
 * The embedded database belongs to one process: there the bus is in-process only.
 */
import crypto from 'node:crypto';
import type pg from 'pg';
import type { Database } from '../db/database.ts';

/** Every channel bound to its payload (plain JSON). */
export interface BusCatalog {
  /** The auth columns (password_version, role, plan, email_verified, e-mail) of user `id` changed. */
  'user.changed': { id: number };
  /** One event of agent run `run` (modules/runtime/events.ts: `RunEvent`). */
  'run.event': { run: number; e: { type: string; [k: string]: unknown } };
  /** Abort run `run` where it executes (its `cancel_requested` flag is already stored). */
  'run.cancel': { run: number };
  /** Jobs of queue `name` were committed: pollers of that queue look now. */
  'jobs.sent': { name: string };
  /** A stored output line (`id` in cloud_log_lines) of user `user`'s cloud container (modules/cloud). */
  'cloud.log': { user: number; id: number; line: string };
  /** User `user`'s cloud container was removed: its log streams end. */
  'cloud.closed': { user: number };
  /** A worker's messenger bot was bound, unbound or deleted: bot pollers reconcile now (modules/messenger). */
  'messenger.bots': { worker_id: number };
  /** Note source `id` changed (status or progress message): its progress streams read it again. */
  'notes.source': { id: number };
  /** Transcript job `job_id` changed status or progress (modules/transcripts). */
  'transcript.progress': {
    job_id: string;
    status: string;
    progress_pct: number;
    step_label: string;
    error: string | null;
  };
}
export type BusChannel = keyof BusCatalog;

/** Runs SQL inside a transaction (`kyselyExecutor(tx)` of jobs/queue.ts). */
export interface SqlExecutor {
  executeSql(text: string, values?: unknown[]): Promise<unknown>;
}

export interface PublishOptions {
  /**
   * Send inside this transaction: other instances get the message when it commits, never when it rolls back,
   * and on PostgreSQL this process's subscribers get it at the commit too. (In-process: at once.)
   */
  tx?: SqlExecutor;
  /**
   * Resolve only once the database server has delivered the message to this instance's own listener (at most
   * `DELIVERY_WAIT_MS`): the server signals every listening instance at the same moment, so by then the others
   * have it too, barring a slow network. Without it, `publish` resolves when the message is committed.
   */
  delivered?: boolean;
}

export interface Bus {
  readonly kind: 'local' | 'postgres';
  /** True while messages from other instances arrive (always true in-process; on PostgreSQL while LISTENing). */
  readonly live: boolean;
  /**
   * Send `payload` on `channel`: this process's subscribers get it before this returns; other instances
   * shortly after. Never rejects (a failed send is logged; receivers' fallbacks cover it), except with `tx`,
   * where a failed statement fails the transaction.
   */
  publish<C extends BusChannel>(channel: C, payload: BusCatalog[C], opts?: PublishOptions): Promise<void>;
  /** Receive every message of `channel` (from this instance and the others). @returns the unsubscribe function. */
  subscribe<C extends BusChannel>(channel: C, fn: (payload: BusCatalog[C]) => void): () => void;
  /** `fn` runs each time the listener (re)connects: messages sent before may have been missed. */
  onGap(fn: () => void): () => void;
  /** Open the listener (PostgreSQL). Does not fail: a refused connection is retried in the background. */
  start(): Promise<void>;
  /** Close the listener; later messages reach this process's subscribers only. */
  stop(): Promise<void>;
}

/** NOTIFY refuses payloads of 8000 bytes or more; parts stay well below. */
const PART_CHARS = 6000;
/** A message larger than this (JSON bytes) is not sent to other instances (logged). */
const MAX_MESSAGE_BYTES = 256 * 1024;
/**
 * How long `publish(…, {delivered:true})` waits for its own echo (ms). As long as the auth hook's user cache
 * trusts a row (http/auth.ts), so a change that answers after a late echo finds the other instances' rows of
 * before the change expired: on a loaded database server the echo took more than the 250 ms this was before.
 */
export const DELIVERY_WAIT_MS = 1000;
const PING_MS = 30_000;
const PG_CHANNEL = 'crm_bus';

type Log = { warn(o: object, m: string): void; error(o: object, m: string): void; info?(o: object, m: string): void };

/** Local subscribers and gap handlers, shared by both implementations. */
function createDispatch(log: Log) {
  const subs = new Map<string, Set<(p: any) => void>>();
  const gaps = new Set<() => void>();
  const call = (fn: () => void, what: string) => {
    try {
      fn();
    } catch (err) {
      log.error({ err: (err as Error).message, channel: what }, 'bus subscriber failed');
    }
  };
  return {
    deliver(channel: string, payload: unknown) {
      const set = subs.get(channel);
      if (set) for (const fn of [...set]) call(() => fn(payload), channel);
    },
    gap() {
      for (const fn of [...gaps]) call(fn, 'gap');
    },
    subscribe(channel: string, fn: (p: any) => void) {
      let set = subs.get(channel);
      if (!set) subs.set(channel, (set = new Set()));
      set.add(fn);
      return () => {
        set.delete(fn);
        if (!set.size) subs.delete(channel);
      };
    },
    onGap(fn: () => void) {
      gaps.add(fn);
      return () => void gaps.delete(fn);
    },
  };
}

/** The in-process bus (the embedded database: one process). */
export function createLocalBus(log: Log): Bus {
  const d = createDispatch(log);
  return {
    kind: 'local',
    live: true,
    async publish(channel, payload) {
      d.deliver(channel, payload);
    },
    subscribe: (channel, fn) => d.subscribe(channel, fn),
    onGap: (fn) => d.onGap(fn),
    async start() {},
    async stop() {},
  };
}

/** The bus of a database: LISTEN/NOTIFY on a PostgreSQL server, in-process on the embedded one. */
export function createBus(database: Database, log: Log): Bus {
  if (database.kind !== 'postgres' || !database.dedicatedClient) return createLocalBus(log);
  return createPgBus(database as Database & { dedicatedClient(): pg.Client }, log);
}

/** Envelope on the wire: origin, sequence, channel and data, or one base64 part of a larger envelope. */
type Wire = { o: string; s: number; c: string; d: unknown } | { o: string; s: number; k: [number, number]; b: string };

function createPgBus(database: Database & { dedicatedClient(): pg.Client }, log: Log): Bus {
  const d = createDispatch(log);
  const origin = crypto.randomBytes(6).toString('hex');
  let seq = 0;
  let client: pg.Client | undefined;
  let live = false;
  let stopped = false;
  let retryMs = 100;
  let reconnectTimer: NodeJS.Timeout | undefined;
  let pingTimer: NodeJS.Timeout | undefined;

  // Outgoing: one statement at a time, so messages are committed (and delivered) in the order published.
  const outbox: Array<{ texts: string[]; done: (sent: boolean) => void }> = [];
  let sending = false;
  // Own messages awaiting their echo (publish with `delivered`), by sequence number.
  const echoes = new Map<number, () => void>();
  // Own messages sent inside a transaction, delivered here when their echo shows the commit.
  const atCommit = new Map<number, { channel: string; payload: unknown; at: number }>();
  // Parts of other instances' large messages, by `origin:seq`.
  const partial = new Map<string, { parts: string[]; got: number; at: number }>();

  const flush = async () => {
    if (sending) return;
    sending = true;
    try {
      while (outbox.length) {
        // Up to ~64 KB of payload per statement.
        const batch: typeof outbox = [];
        let size = 0;
        while (outbox.length && (batch.length === 0 || size < 64_000)) {
          const m = outbox.shift()!;
          batch.push(m);
          for (const t of m.texts) size += t.length;
        }
        const texts = batch.flatMap((m) => m.texts);
        const calls = texts.map((_, i) => `pg_notify($1, $${i + 2})`).join(', ');
        let sent = true;
        try {
          await database.executeSql(`select ${calls}`, [PG_CHANNEL, ...texts]);
        } catch (err) {
          sent = false;
          log.warn({ err: (err as Error).message, messages: batch.length }, 'bus: messages not sent');
        }
        for (const m of batch) m.done(sent);
      }
    } finally {
      sending = false;
    }
  };

  const encode = (s: number, channel: string, payload: unknown): string[] | undefined => {
    const whole = JSON.stringify({ o: origin, s, c: channel, d: payload } satisfies Wire);
    const bytes = Buffer.byteLength(whole);
    if (bytes < 7900) return [whole];
    if (bytes > MAX_MESSAGE_BYTES) return undefined;
    const b64 = Buffer.from(whole).toString('base64');
    const n = Math.ceil(b64.length / PART_CHARS);
    return Array.from({ length: n }, (_, i) =>
      JSON.stringify({ o: origin, s, k: [i, n], b: b64.slice(i * PART_CHARS, (i + 1) * PART_CHARS) } satisfies Wire),
    );
  };

  const receive = (text: string | undefined) => {
    if (!text) return;
    let w: Wire;
    try {
      w = JSON.parse(text) as Wire;
    } catch {
      return;
    }
    if (w.o === origin) {
      // Our own message back: this process's subscribers had it when it was published (or get it now, when
      // it was sent inside a transaction, which has committed).
      if (!('k' in w) || w.k[0] === w.k[1] - 1) {
        echoes.get(w.s)?.();
        const later = atCommit.get(w.s);
        if (later) {
          atCommit.delete(w.s);
          d.deliver(later.channel, later.payload);
        }
      }
      return;
    }
    if ('k' in w) {
      const key = `${w.o}:${w.s}`;
      let p = partial.get(key);
      if (!p) {
        const now = Date.now();
        for (const [k, v] of partial) if (now - v.at > 60_000) partial.delete(k);
        partial.set(key, (p = { parts: new Array(w.k[1]), got: 0, at: now }));
      }
      if (p.parts[w.k[0]] === undefined) p.got++;
      p.parts[w.k[0]] = w.b;
      if (p.got < w.k[1]) return;
      partial.delete(key);
      try {
        w = JSON.parse(Buffer.from(p.parts.join(''), 'base64').toString('utf8')) as Wire;
      } catch {
        return;
      }
      if ('k' in w) return;
    }
    d.deliver(w.c, w.d);
  };

  const drop = (c: pg.Client) => {
    if (client !== c) return;
    client = undefined;
    live = false;
    if (pingTimer) clearInterval(pingTimer);
    pingTimer = undefined;
    c.removeAllListeners('notification');
    c.end().catch(() => {});
    for (const done of [...echoes.values()]) done();
    atCommit.clear(); // their echoes are lost with the connection; onGap tells the subscribers
    if (!stopped) schedule();
  };

  const schedule = () => {
    if (reconnectTimer || stopped) return;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      void connect();
    }, retryMs);
    reconnectTimer.unref();
    retryMs = Math.min(retryMs * 2, 5000);
  };

  const connect = async (): Promise<void> => {
    if (stopped || client) return;
    const c = database.dedicatedClient();
    c.on('error', (err) => {
      log.warn({ err: err.message }, 'bus: listener connection lost; reconnecting');
      drop(c);
    });
    c.on('end', () => drop(c));
    c.on('notification', (n) => {
      if (n.channel === PG_CHANNEL) receive(n.payload);
    });
    client = c;
    try {
      await c.connect();
      await c.query(`listen ${PG_CHANNEL}`);
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'bus: listener could not connect; retrying');
      drop(c);
      return;
    }
    if (client !== c || stopped) return;
    live = true;
    retryMs = 100;
    pingTimer = setInterval(() => {
      // A connection that stopped answering (a half-open socket) is replaced.
      const t = setTimeout(() => drop(c), 5000);
      c.query('select 1').then(
        () => clearTimeout(t),
        () => {
          clearTimeout(t);
          drop(c);
        },
      );
    }, PING_MS);
    pingTimer.unref();
    d.gap();
  };

  return {
    kind: 'postgres',
    get live() {
      return live;
    },
    async publish(channel, payload, opts = {}) {
      const s = ++seq;
      const texts = encode(s, channel, payload);
      if (opts.tx && texts) {
        if (live) {
          const now = Date.now();
          // Forget messages of transactions that rolled back (no echo ever comes).
          for (const [k, v] of atCommit) if (now - v.at > 60_000) atCommit.delete(k);
          atCommit.set(s, { channel, payload, at: now });
        } else d.deliver(channel, payload);
        const calls = texts.map((_, i) => `pg_notify($1, $${i + 2})`).join(', ');
        try {
          await opts.tx.executeSql(`select ${calls}`, [PG_CHANNEL, ...texts]);
        } catch (err) {
          atCommit.delete(s);
          throw err;
        }
        return;
      }
      d.deliver(channel, payload);
      if (!texts) {
        log.warn({ channel }, 'bus: message too large for other instances; not sent');
        return;
      }
      return new Promise<void>((resolve) => {
        let timer: NodeJS.Timeout | undefined;
        const finish = () => {
          if (timer) clearTimeout(timer);
          echoes.delete(s);
          resolve();
        };
        // The echo can arrive before the statement's own answer: wait for it from now on.
        const waitEcho = !!opts.delivered && live;
        if (waitEcho) echoes.set(s, finish);
        outbox.push({
          texts,
          done: (sent) => {
            if (!waitEcho || !sent || !echoes.has(s)) return finish();
            timer = setTimeout(finish, DELIVERY_WAIT_MS);
            timer.unref();
          },
        });
        void flush();
      });
    },
    subscribe: (channel, fn) => d.subscribe(channel, fn as (p: any) => void),
    onGap: (fn) => d.onGap(fn),
    async start() {
      stopped = false;
      await connect();
    },
    async stop() {
      stopped = true;
      if (reconnectTimer) clearTimeout(reconnectTimer);
      reconnectTimer = undefined;
      // Let messages already published go out (bounded: a database that stopped answering does not hold us).
      for (let waited = 0; (sending || outbox.length) && waited < 2000; waited += 5)
        await new Promise((r) => setTimeout(r, 5));
      if (client) drop(client);
    },
  };
}
