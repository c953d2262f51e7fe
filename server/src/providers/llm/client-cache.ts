import { LRUCache } from 'lru-cache';

/**
 * A small per-key cache of SDK clients (a client holds its key and connection pool): at most `max`, the least
 * recently used one dropped when a new key needs room.
 */
export function clientCache<C extends object>(make: (apiKey: string) => C, max = 100): (apiKey: string) => C {
  const clients = new LRUCache<string, C>({ max });
  return (apiKey) => {
    let c = clients.get(apiKey);
    if (!c) {
      c = make(apiKey);
      clients.set(apiKey, c);
    }
    return c;
  };
}
