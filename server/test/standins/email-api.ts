/**
 * A stand-in of the transactional e-mail API, speaking the vendor's protocol: `POST /emails` with
 * `Authorization: Bearer <key>` and JSON `{from, to: [...], subject, html, text, headers?}` → 200 `{id}`; an unknown
 * key → 401 (403 for a key the vendor knows as revoked), a message without `from`, `to` or `subject` → 422
 * `{name: 'validation_error', message}`. `failNext(n, status)` makes the next n accepted calls fail (a vendor
 * outage) to exercise retries.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ApiMail {
  id: string;
  /** The bearer key it came with. */
  key: string;
  from: string;
  to: string[];
  subject: string;
  html: string;
  text: string;
  headers: Record<string, string>;
}

/**
 * Start the stand-in on 127.0.0.1.
 * @param keys the API keys it accepts (more can be added to the returned set)
 */
export async function startEmailApiStandIn(keys: string[] = []) {
  const accepted = new Set(keys);
  const revoked = new Set<string>();
  const messages: ApiMail[] = [];
  let failures: { left: number; status: number } = { left: 0, status: 500 };
  let calls = 0;
  const server = createServer((req, res) => {
    const send = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/emails') return send(404, { name: 'not_found', message: 'Not found' });
      calls++;
      const key = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      if (revoked.has(key)) return send(403, { name: 'restricted_api_key', message: 'This API key is revoked' });
      if (!accepted.has(key)) return send(401, { name: 'validation_error', message: 'API key is invalid' });
      let body: Partial<ApiMail>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return send(400, { name: 'invalid_json', message: 'Invalid JSON' });
      }
      if (!body.from || !Array.isArray(body.to) || !body.to.length || !body.subject)
        return send(422, { name: 'validation_error', message: 'Missing `from`, `to` or `subject` field.' });
      if (failures.left > 0) {
        failures.left--;
        return send(failures.status, { name: 'application_error', message: 'Something went wrong' });
      }
      const id = `msg_${messages.length + 1}`;
      messages.push({
        id,
        key,
        from: body.from,
        to: body.to,
        subject: body.subject,
        html: body.html ?? '',
        text: body.text ?? '',
        headers: body.headers ?? {},
      });
      send(200, { id });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    messages,
    keys: accepted,
    /** Refuse `key` from now on with 403 (the vendor revoked it). */
    revoke: (key: string) => revoked.add(key),
    /** The next `n` valid messages fail with `status` (default 500). */
    failNext: (n: number, status = 500) => (failures = { left: n, status }),
    /** Calls to `POST /emails` so far (accepted or not). */
    calls: () => calls,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
