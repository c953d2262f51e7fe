/** A small per-key cache of SDK clients (a client holds its key and connection pool). */
export function clientCache<C>(make: (apiKey: string) => C, max = 100): (apiKey: string) => C {
  const clients = new Map<string, C>();
  return (apiKey) => {
    let c = clients.get(apiKey);
    if (!c) {
      if (clients.size >= max) clients.clear();
      c = make(apiKey);
      clients.set(apiKey, c);
    }
    return c;
  };
}
