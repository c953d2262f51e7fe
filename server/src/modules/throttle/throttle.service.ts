/**
 * The throttle area: rate limits whose counters live in the database, so they hold across instances
 * (docs/ARCHITECTURE.md, Throttling). It provides the store `@fastify/rate-limit` counts through (http/throttle.ts
 * names the limits and the routes they apply to) and sweeps ended windows away.
 *
 * Keys are stored as SHA-256 digests: the table never holds an address or an e-mail.
 */
import crypto from 'node:crypto';
import type { HitState, ThrottleRepo } from './throttle.repo.ts';

/** How often ended windows are swept (ms). */
const PURGE_EVERY_MS = 10 * 60 * 1000;

type Callback = (err: Error | null, res?: HitState) => void;

/** The store interface `@fastify/rate-limit` calls (`incr`, `read`, `child`), over the shared table. */
export interface RateLimitStore {
  incr(key: string, cb: Callback, timeWindow: number, max: number): void;
  read(key: string, cb: Callback, timeWindow: number, max?: number): void;
  child(routeOptions: { exponentialBackoff?: boolean }): RateLimitStore;
}

export interface ThrottleDeps {
  repo: ThrottleRepo;
  log: { error(o: object, m: string): void };
}

const digest = (key: string) => crypto.createHash('sha256').update(key).digest('hex');

export function createThrottleService(deps: ThrottleDeps) {
  const { repo } = deps;

  /** A store over the table; `backoff`: a key over its limit waits twice as long at each further hit. */
  const storeOf = (backoff: boolean): RateLimitStore => ({
    incr(key, cb, timeWindow, max) {
      repo.hit(digest(key), timeWindow, max, backoff).then((r) => cb(null, r), cb);
    },
    read(key, cb) {
      repo.read(digest(key)).then((r) => cb(null, r), cb);
    },
    child: (routeOptions) => storeOf(!!routeOptions.exponentialBackoff),
  });

  let timer: NodeJS.Timeout | undefined;

  return {
    /**
     * The store class for `@fastify/rate-limit`'s `store` option (the plugin constructs it with its global
     * options; each limit gets a child with its own).
     */
    Store: function DbStore(this: unknown, params: { exponentialBackoff?: boolean }) {
      return storeOf(!!params.exponentialBackoff);
    } as unknown as new (params: object) => RateLimitStore,

    /** Forget the hits of `key` (as the limiter generated it). */
    clear: (key: string) => repo.clear(digest(key)),

    /** Sweep ended windows every 10 minutes (any instance may; the delete is idempotent). */
    start(): void {
      timer ??= setInterval(() => {
        repo.purge().catch((err) => deps.log.error({ err: (err as Error).message }, 'rate limit sweep failed'));
      }, PURGE_EVERY_MS);
      timer.unref();
    },
    stop(): void {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}

export type ThrottleService = ReturnType<typeof createThrottleService>;
