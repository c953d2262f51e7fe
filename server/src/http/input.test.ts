/**
 * Hostile input and the envelope: the inputs that answered 500, Fastify's own errors, validation
 * messages, the database's data exceptions, and what a failing request leaves in the log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import pino from 'pino';
import { sql } from 'kysely';
import { api, buildTestApp, createProject, createUser, type TestApp } from '../../test/helpers.ts';
import { installErrorHandling } from './errors.ts';
import { loggerOptions } from './logging.ts';

let t: TestApp;
let admin: Awaited<ReturnType<typeof createUser>>;
let user: Awaited<ReturnType<typeof createUser>>;
const P = 'hostile';

/** A pino logger with the server's options, writing into memory. */
function memoryLogger() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { log: pino(loggerOptions('trace'), stream), text: () => lines.join('') };
}

beforeAll(async () => {
  t = await buildTestApp();
  admin = await createUser(t, { role: 'admin' });
  user = await createUser(t);
  await createProject(t, user.id, P);
  const issue = await api(t.app, 'POST', `/api/crm/projects/${P}/issues`, {
    token: user.token,
    body: { title: 'one' },
  });
  expect(issue.status).toBe(201);
});
afterAll(async () => {
  await t?.close();
});

describe('NUL bytes, unpaired surrogates and control characters', () => {
  it('answer 400 invalid_request naming the field where they answered 500 (bodies, query strings, path parameters)', async () => {
    const base = `/api/crm/projects/${P}`;
    const cases: Array<[string, string, unknown, string, string?]> = [
      ['POST', '/api/auth/login', { email: 'a\u0000@b.com', password: 'xxxxxxxxx' }, 'body/email'],
      [
        'POST',
        '/api/auth/register',
        { email: 'a\u0000@b.com', password: 'Long-enough-pw-1', invite_code: 'x' },
        'body/email',
      ],
      ['POST', '/api/auth/forgot-password', { email: 'a\u0000@b.com' }, 'body/email'],
      ['POST', `${base}/issues`, { title: 'a\u0000b' }, 'body/title', user.token],
      ['PUT', `${base}/issues/1`, { title: 'a\u0000b' }, 'body/title', user.token],
      ['POST', `${base}/issues/1/log`, { message: 'a\u0000b' }, 'body/message', user.token],
      ['PUT', `${base}/wiki/save`, { path: 'p.md', content: '# a\u0000b' }, 'body/content', user.token],
      ['POST', `${base}/message`, { text: 'a\u0000b' }, 'body/text', user.token],
      ['POST', `${base}/workers`, { label: 'a\u0000b' }, 'body/label', user.token],
      ['POST', '/api/crm/admin/invites', { note: 'a\u0000b' }, 'body/note', admin.token],
      ['POST', `${base}/issues`, { title: 'ok', labels: ['fine', 'a\u0000'] }, 'body/labels/1', user.token],
      ['PUT', `${base}/issues/1`, { title: 'lone \ud800 surrogate' }, 'body/title', user.token],
      ['GET', `${base}/issues?assignee=a%00b`, undefined, 'querystring/assignee', user.token],
      ['GET', `${base}/issues?assignee=a%0Ab`, undefined, 'querystring/assignee', user.token],
      ['GET', '/api/crm/projects/a%00b', undefined, 'params/name', user.token],
      ['GET', '/api/crm/projects/a%1Bb/issues', undefined, 'params/name', user.token],
    ];
    for (const [method, url, body, path, token] of cases) {
      const res = await api(t.app, method as any, url, { token, body });
      const where = `${method} ${url} ${path}`;
      expect(res.status, where).toBe(400);
      expect(res.body.error, where).toBe('invalid_request');
      expect(res.body.details, where).toEqual([{ path, message: expect.any(String) }]);
      expect(res.body.message, where).toMatch(new RegExp(`^${path}: `));
      expect(res.text, where).not.toMatch(/a\\u0000b|\\ud800/);
    }
    // Nothing was stored: the issue keeps its title, no issue or worker was added.
    const list = await api(t.app, 'GET', `${base}/issues`, { token: user.token });
    expect(list.body.issues.map((i: any) => i.title)).toEqual(['one']);
  });

  it('a multipart JSON field gets the same check (onboarding setup `config`)', async () => {
    const boundary = '----x';
    const config = JSON.stringify({ projectName: 'nul-setup', displayName: 'a\u0000b' });
    const payload = `--${boundary}\r\nContent-Disposition: form-data; name="config"\r\n\r\n${config}\r\n--${boundary}--\r\n`;
    const res = await api(t.app, 'POST', '/api/crm/onboarding/setup', {
      token: user.token,
      payload,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([{ path: 'config/displayName', message: 'must not contain the NUL character' }]);
  });
});

describe('deep JSON and huge numbers', () => {
  it('a body nested more than 32 levels is refused before parsing', async () => {
    for (const payload of ['['.repeat(100_000) + ']'.repeat(100_000), '{"a":'.repeat(40) + '1' + '}'.repeat(40)]) {
      const res = await api(t.app, 'POST', '/api/auth/login', {
        payload,
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'invalid_request',
        message: 'body: is nested more than 32 levels deep',
        details: [{ path: 'body', message: 'is nested more than 32 levels deep' }],
      });
    }
    const shallow = '{"email":"a@b.c","password":"x","x":' + '['.repeat(30) + ']'.repeat(30) + '}';
    const res = await api(t.app, 'POST', '/api/auth/login', {
      payload: shallow,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.body.details).toEqual([{ path: 'body/x', message: "unknown field 'x'" }]);
  });

  it('huge numbers are refused by the schema, in bodies, query strings and path parameters', async () => {
    const base = `/api/crm/projects/${P}`;
    const reorder = await api(t.app, 'POST', `${base}/workers/reorder`, {
      token: user.token,
      payload: '{"order":[99999999999999999999]}',
      headers: { 'content-type': 'application/json' },
    });
    expect(reorder.status).toBe(400);
    expect(reorder.body.details).toEqual([{ path: 'body/order/0', message: 'must be <= 2147483647' }]);
    const invites = await api(t.app, 'POST', '/api/crm/admin/invites', {
      token: admin.token,
      payload: '{"count":1e400}',
      headers: { 'content-type': 'application/json' },
    });
    expect(invites.status).toBe(400);
    expect(invites.body.details[0].path).toBe('body/count');
    const query = await api(t.app, 'GET', `${base}/issues?limit=99999999999999999999`, { token: user.token });
    expect(query.body.details).toEqual([{ path: 'querystring/limit', message: 'must be <= 500' }]);
    const param = await api(t.app, 'GET', `${base}/issues/99999999999999999999`, { token: user.token });
    expect(param.body.details).toEqual([{ path: 'params/id', message: 'must be <= 2147483647' }]);
  });
});

describe("Fastify's own answers, in the envelope and without the input", () => {
  it('a path parameter over 500 characters: 414 uri_too_long; malformed percent-encoding: 400', async () => {
    const long = 'z'.repeat(600);
    const tooLong = await api(t.app, 'GET', `/api/crm/projects/${long}`, { token: user.token });
    expect(tooLong.status).toBe(414);
    expect(tooLong.body).toEqual({ error: 'uri_too_long', message: expect.any(String) });
    expect(tooLong.headers['x-request-id']).toBeTruthy();
    expect(tooLong.text).not.toContain('zzzz');
    const bad = await api(t.app, 'GET', '/api/crm/projects/%E0%A4%A', { token: user.token });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'invalid_request', message: expect.any(String) });
    expect(bad.text).not.toContain('%E0');
  });

  it('a known path with another method: 405 method_not_allowed with Allow; an unknown path: 404 without the URL', async () => {
    const wrong = await api(t.app, 'DELETE', '/api/auth/me', { token: user.token });
    expect(wrong.status).toBe(405);
    expect(wrong.body).toEqual({ error: 'method_not_allowed', message: expect.any(String) });
    expect(wrong.headers.allow).toBe('GET, HEAD');
    const params = await api(t.app, 'PATCH', `/api/crm/projects/${P}/issues/1`, { token: user.token });
    expect(params.status).toBe(405);
    expect(params.headers.allow).toBe('GET, HEAD, PUT');
    const unknown = await api(t.app, 'GET', '/api/crm/secret-looking-path-123?x=<b>', { token: user.token });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'not_found', message: expect.any(String) });
    expect(unknown.text).not.toMatch(/secret-looking|<b>/);
  });

  it('an unsupported content type: 415; broken JSON: 400 invalid_json, without the body', async () => {
    const xml = await api(t.app, 'POST', '/api/auth/login', {
      payload: '<login/>',
      headers: { 'content-type': 'application/xml' },
    });
    expect(xml.status).toBe(415);
    expect(xml.body).toEqual({ error: 'unsupported_media_type', message: expect.any(String) });
    // Multipart bodies are read by the upload routes alone (http/multipart.ts): elsewhere like any other type.
    const boundary = '----x';
    const multipart = await api(t.app, 'POST', '/api/auth/login', {
      payload: `--${boundary}\r\nContent-Disposition: form-data; name="email"\r\n\r\nleak-me@x.y\r\n--${boundary}--\r\n`,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    expect(multipart.status).toBe(415);
    expect(multipart.body).toEqual({ error: 'unsupported_media_type', message: expect.any(String) });
    const broken = await api(t.app, 'POST', '/api/auth/login', {
      payload: '{"email": "leak-me@x.y", oops',
      headers: { 'content-type': 'application/json' },
    });
    expect(broken.status).toBe(400);
    expect(broken.body).toEqual({ error: 'invalid_json', message: 'The body is not valid JSON.' });
  });

  it('headers over the limit: 431 headers_too_large from the HTTP parser, in the envelope', async () => {
    const other = await buildTestApp();
    try {
      await other.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = other.app.server.address() as net.AddressInfo;
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => {
          socket.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'h'.repeat(20_000)}\r\n\r\n`);
        });
        let data = '';
        socket.on('data', (d) => (data += d));
        socket.on('close', () => resolve(data));
        socket.on('error', reject);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 431 /);
      const body = JSON.parse(answer.split('\r\n\r\n')[1]);
      expect(body).toEqual({ error: 'headers_too_large', message: expect.any(String) });
      expect(answer).not.toContain('hhhh');
    } finally {
      await other.close();
    }
  });
});

describe('validation messages a person can act on', () => {
  it('unknown field named, allowed values listed, e-mail described without a regular expression', async () => {
    const extra = await api(t.app, 'POST', '/api/auth/login', {
      body: { email: 'a@b.c', password: 'x', remember: true },
    });
    expect(extra.status).toBe(400);
    expect(extra.body.message).toBe("body/remember: unknown field 'remember'");
    const status = await api(t.app, 'PUT', `/api/crm/projects/${P}/issues/1`, {
      token: user.token,
      body: { status: 'done' },
    });
    expect(status.body.details).toEqual([
      { path: 'body/status', message: "must be one of: 'open', 'in_progress', 'blocked', 'deferred', 'closed'" },
    ]);
    const email = await api(t.app, 'POST', '/api/auth/waitlist', { body: { email: 'not-an-email' } });
    expect(email.body.details).toEqual([
      { path: 'body/email', message: 'is not in the expected format (an e-mail address)' },
    ]);
    expect(email.text).not.toMatch(/\^|\\\\s|pattern/);
  });
});

describe('the database safety net', () => {
  it('a value PostgreSQL refuses (SQLSTATE class 22) answers 400 invalid_request, not 500; the log keeps no parameter', async () => {
    const mem = memoryLogger();
    const app = Fastify({ loggerInstance: mem.log as any });
    installErrorHandling(app);
    app.get('/nul', async () => (await sql`select ${'nul\u0000-param-secret'}::text as v`.execute(t.db)).rows);
    app.get('/range', async () => (await sql`select ${'99999999999'}::int4 as v`.execute(t.db)).rows);
    app.get('/syntax', async () => (await sql`select ${'not-a-number'}::int4 as v`.execute(t.db)).rows);
    await app.ready();
    try {
      for (const url of ['/nul', '/range', '/syntax']) {
        const res = await api(app, 'GET', url);
        expect(res.status, url).toBe(400);
        expect(res.body, url).toEqual({ error: 'invalid_request', message: expect.any(String) });
        expect(res.text, url).not.toMatch(/select|int4|param-secret|99999999999|not-a-number/);
      }
      const log = mem.text();
      expect(log).toContain('the database refused a value of the request');
      expect(log).not.toContain('param-secret');
      expect(log).not.toMatch(/"params"|"query"/);
    } finally {
      await app.close();
    }
  });
});

describe('logs of a failing request', () => {
  it('a request failing inside the database with a password hash in its parameters leaves no secret in the log', async () => {
    const mem = memoryLogger();
    const l = await buildTestApp({ logger: mem.log });
    try {
      const u = await createUser(l, { password: 'Current-pw-73519' });
      await sql`create function refuse_user_updates() returns trigger language plpgsql as $$ begin raise exception 'users are read-only here'; end $$`.execute(
        l.db,
      );
      await sql`create trigger users_read_only before update on users for each row execute function refuse_user_updates()`.execute(
        l.db,
      );
      const res = await api(l.app, 'POST', '/api/auth/change-password', {
        token: u.token,
        body: { current_password: 'Current-pw-73519', new_password: 'New-secret-pw-88412' },
      });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({
        error: 'internal_error',
        message: expect.any(String),
        request_id: expect.any(String),
      });
      const log = mem.text();
      expect(log).toContain('unexpected failure');
      expect(log).toContain('users are read-only here');
      for (const secret of ['Current-pw-73519', 'New-secret-pw-88412', '$argon2', u.token, '"params"', '"query"'])
        expect(log, secret).not.toContain(secret);
    } finally {
      await l.close();
    }
  });
});
