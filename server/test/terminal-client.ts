/**
 * A cloud terminal client for tests: opens the terminal WebSocket of user `userId` on the service at `base`
 * (`http://host:port`), collects what it prints, and waits for a pattern (failing with the last output seen).
 * `sockets` collects the socket so the test can close it at the end.
 */
import WebSocket from 'ws';

export function openTerminalClient(
  base: string,
  userId: number,
  token: string,
  opts: { sockets?: WebSocket[]; waitMs?: number } = {},
) {
  const ws = new WebSocket(`${base.replace('http', 'ws')}/api/crm/ws/cloud/${userId}/terminal?token=${token}`);
  opts.sockets?.push(ws);
  let out = '';
  ws.on('message', (d) => (out += d.toString()));
  return {
    ws,
    opened: new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    }),
    async waitFor(re: RegExp, ms = opts.waitMs ?? 20_000): Promise<RegExpMatchArray> {
      const until = Date.now() + ms;
      for (;;) {
        const m = out.match(re);
        if (m) return m;
        if (Date.now() > until) throw new Error(`terminal never printed ${re}: ${JSON.stringify(out.slice(-600))}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}
