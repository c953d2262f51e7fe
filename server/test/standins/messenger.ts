/**
 * A local bot API (CONTRACT.md §5): `GET|POST /bot{token}/getMe` answers the bot registered for the token
 * (401 `{ok:false}` otherwise); `POST /bot{token}/sendMessage` records `{chat_id, text, reply_markup}`.
 * Every call is recorded as `{method, token, body}`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BotCall {
  method: string;
  token: string;
  body: any;
}

export async function startMessengerStandIn(bots: Record<string, { id: number; username: string }> = {}) {
  const calls: BotCall[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const m = /^\/bot([^/]+)\/([A-Za-z]+)/.exec(req.url ?? '');
      const send = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (!m) return send(404, { ok: false, error_code: 404, description: 'Not Found' });
      const [, token, method] = m;
      let body: any;
      try {
        body = raw ? JSON.parse(raw) : {};
      } catch {
        return send(400, { ok: false, error_code: 400, description: 'Bad Request: invalid JSON' });
      }
      calls.push({ method, token, body });
      const bot = bots[token];
      if (!bot) return send(401, { ok: false, error_code: 401, description: 'Unauthorized' });
      if (method === 'getMe')
        return send(200, {
          ok: true,
          result: { id: bot.id, is_bot: true, first_name: bot.username, username: bot.username },
        });
      if (method === 'sendMessage') {
        if (!body.chat_id || !body.text)
          return send(400, { ok: false, error_code: 400, description: 'Bad Request: chat_id and text are required' });
        return send(200, {
          ok: true,
          result: { message_id: calls.length, chat: { id: body.chat_id }, text: body.text },
        });
      }
      return send(404, { ok: false, error_code: 404, description: 'Not Found' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    /** Register another valid token. */
    addBot: (token: string, bot: { id: number; username: string }) => (bots[token] = bot),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
