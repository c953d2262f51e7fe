/**
 * Throttling through the HTTP API, with small limits: sign-in per account and per address with backoff (429 and
 * `Retry-After`, no password hashed meanwhile), a successful login clearing its account's count, password resets
 * per address, exports and uploads per user; and, on PostgreSQL, one limit held across two instances.
 */
import { inject } from 'vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRateLimit } from '../config.ts';
import {
  buildTestApp,
  buildTestCluster,
  createProject,
  createUser,
  multipartBody,
  type TestApp,
} from '../../test/helpers.ts';

const env = {
  RATE_LIMIT_LOGIN_ACCOUNT: '3/1m',
  RATE_LIMIT_LOGIN_ADDRESS: '6/1m',
  RATE_LIMIT_PASSWORD_RESET_ADDRESS: '2/1h',
  RATE_LIMIT_EXPORTS: '1/1h',
  RATE_LIMIT_UPLOADS: '1/1h',
};
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ env });
});
afterAll(async () => {
  await t?.close();
});

let n = 0;
/** A request from its own address (each test counts its own). */
const from = (address: string) => async (method: 'GET' | 'POST', url: string, body?: object, token?: string) => {
  const res = await t.app.inject({
    method,
    url,
    remoteAddress: address,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    ...(body ? { payload: body } : {}),
  });
  return { status: res.statusCode, body: res.json(), headers: res.headers };
};

describe('rate limits', () => {
  it('parses limits', () => {
    expect(parseRateLimit('10/15m')).toEqual({ max: 10, windowMs: 900_000 });
    expect(parseRateLimit('2/1d')).toEqual({ max: 2, windowMs: 86_400_000 });
    expect(parseRateLimit('off')).toBeNull();
  });

  it('throttles sign-in per account with backoff, before any hash; a success clears the count', async () => {
    const req = from(`10.1.0.${++n}`);
    const u = await createUser(t);
    for (let i = 0; i < 3; i++)
      expect((await req('POST', '/api/auth/login', { email: u.email, password: 'wrong password' })).status).toBe(401);
    // Over the limit even with the right password; the e-mail's case does not make another account.
    const limited = await req('POST', '/api/auth/login', { email: u.email.toUpperCase(), password: u.password });
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe('rate_limited');
    const first = Number(limited.headers['retry-after']);
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThanOrEqual(60);
    expect(limited.body.retry_after).toBe(first);
    // Each further attempt doubles the wait.
    const again = await req('POST', '/api/auth/login', { email: u.email, password: u.password });
    expect(again.status).toBe(429);
    expect(Number(again.headers['retry-after'])).toBeGreaterThan(60);
    // The throttled attempts never reached the password check.
    const failed = await t.db
      .selectFrom('auth_events')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', u.id)
      .where('type', '=', 'login_failed')
      .executeTakeFirstOrThrow();
    expect(Number(failed.n)).toBe(3);

    // Another account from another address is not affected; a success forgets earlier failures.
    const req2 = from(`10.1.0.${++n}`);
    const v = await createUser(t);
    for (let i = 0; i < 2; i++)
      expect((await req2('POST', '/api/auth/login', { email: v.email, password: 'nope' })).status).toBe(401);
    expect((await req2('POST', '/api/auth/login', { email: v.email, password: v.password })).status).toBe(200);
    for (let i = 0; i < 3; i++)
      expect((await req2('POST', '/api/auth/login', { email: v.email, password: 'nope' })).status).toBe(401);
    expect((await req2('POST', '/api/auth/login', { email: v.email, password: 'nope' })).status).toBe(429);
  });

  it('throttles sign-in per address across accounts, and password resets per address', async () => {
    const req = from(`10.2.0.${++n}`);
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++)
      statuses.push((await req('POST', '/api/auth/login', { email: `nobody${i}@example.com`, password: 'x' })).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 429]);
    // Another address is still answered.
    const other = from(`10.2.1.${++n}`);
    expect((await other('POST', '/api/auth/login', { email: 'nobody@example.com', password: 'x' })).status).toBe(401);

    const forgot = [];
    for (let i = 0; i < 3; i++)
      forgot.push((await req('POST', '/api/auth/forgot-password', { email: `x${i}@example.com` })).status);
    expect(forgot).toEqual([200, 200, 429]);
  });

  it('throttles expensive routes per user', async () => {
    const req = from(`10.3.0.${++n}`);
    const a = await createUser(t);
    const b = await createUser(t);
    expect((await req('GET', '/api/auth/export', undefined, a.token)).status).not.toBe(429);
    const second = await req('GET', '/api/auth/export', undefined, a.token);
    expect(second.status).toBe(429);
    expect(second.body.error).toBe('rate_limited');
    expect((await req('GET', '/api/auth/export', undefined, b.token)).status).not.toBe(429);
  });

  it('throttles uploads per user on an upload route (declared in its multipart scope, http/multipart.ts)', async () => {
    const a = await createUser(t);
    const project = await createProject(t, a.id);
    const upload = async () => {
      const m = multipartBody([{ name: 'file', value: 'text', filename: 'a.txt', contentType: 'text/plain' }]);
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/crm/projects/${project.name}/files/upload`,
        remoteAddress: `10.4.0.${++n}`,
        headers: { ...m.headers, authorization: `Bearer ${a.token}` },
        payload: m.payload,
      });
      return { status: res.statusCode, body: res.json() };
    };
    expect((await upload()).status).toBe(201);
    const second = await upload();
    expect(second.status).toBe(429);
    expect(second.body.error).toBe('rate_limited');
  });

  it('holds a limit across instances (PostgreSQL)', async (ctx) => {
    if (inject('dbKind') !== 'postgres') ctx.skip();
    const cluster = await buildTestCluster(2, { env });
    try {
      const [i1, i2] = cluster.instances;
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) {
        const inst = i % 2 ? i2 : i1;
        const res = await inst.app.inject({
          method: 'POST',
          url: '/api/auth/login',
          remoteAddress: '10.4.0.1',
          payload: { email: `x${i}@example.com`, password: 'x' },
        });
        statuses.push(res.statusCode);
      }
      expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 429]);
    } finally {
      await cluster.close();
    }
  });
});
