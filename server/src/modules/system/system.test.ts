import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { api, buildTestApp, createUser, type TestApp } from '../../../test/helpers.ts';
import { loggerOptions } from '../../http/logging.ts';
import { AppError, Conflict, installErrorHandling, Upstream } from '../../http/errors.ts';

let t: TestApp;
let user: Awaited<ReturnType<typeof createUser>>;

/** A pino logger (the server's options) writing into memory. */
function memoryLogger(level = 'trace') {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { log: pino(loggerOptions(level), stream) as unknown as FastifyBaseLogger, text: () => lines.join('') };
}

beforeAll(async () => {
  t = await buildTestApp();
  user = await createUser(t);
});
afterAll(async () => {
  await t?.close();
});

describe('health and readiness', () => {
  it("/healthz answers {ok:true, version} without a token: package.json's version", async () => {
    const res = await api(t.app, 'GET', '/healthz');
    expect(res.status).toBe(200);
    const pkg = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '../../../../package.json'), 'utf8'));
    expect(res.body).toEqual({ ok: true, version: pkg.version });
  });

  it('/readyz answers 200 with the database kind without a token', async () => {
    const res = await api(t.app, 'GET', '/readyz');
    expect(res.status).toBe(200);
    expect(res.body.ok).toBe(true);
    expect(res.body.database).toBe(t.database.kind);
    expect(['pglite', 'postgres']).toContain(res.body.database);
    expect(typeof res.body.vector_search).toBe('string');
  });

  it('/readyz lists the optional tools, present or missing with their cost and how to add them', async () => {
    // Readiness does not wait for the tools' check: once it has finished, the answer lists them.
    await t.deps.capabilities.list();
    const res = await api(t.app, 'GET', '/readyz');
    expect(res.body.capabilities_checked).toBe(true);
    const caps = res.body.capabilities as Array<{ name: string; present: boolean; cost: string; add: string }>;
    expect(caps.map((c) => c.name)).toEqual(['ffmpeg', 'ffprobe', 'bubblewrap', 'git', 'yt-dlp', 'docker']);
    for (const c of caps) {
      expect(typeof c.present).toBe('boolean');
      expect(c.cost.length).toBeGreaterThan(0);
      expect(c.add.length).toBeGreaterThan(0);
    }
    // ffmpeg is always there: the system's, or the copy npm install brought.
    expect(caps.find((c) => c.name === 'ffmpeg')).toMatchObject({ present: true });
  });

  it('/readyz answers at once while the tools are first checked: no capabilities yet, capabilities_checked false', async () => {
    const other = await buildTestApp();
    try {
      const res = await api(other.app, 'GET', '/readyz');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ ok: true, capabilities: [], capabilities_checked: false });
      // That answer started the check; when it is over, the next answer has it.
      await other.deps.capabilities.list();
      const after = await api(other.app, 'GET', '/readyz');
      expect(after.body.capabilities_checked).toBe(true);
      expect(after.body.capabilities.length).toBe(6);
    } finally {
      await other.close();
    }
  });

  it('/readyz answers 503 not_ready in the error envelope when the database is closed', async () => {
    const other = await buildTestApp();
    // The job queue stops first: a poller completing a job on a closed pool would be an unhandled rejection.
    await other.deps.jobs.stop();
    await other.database.close();
    try {
      const res = await api(other.app, 'GET', '/readyz');
      expect(res.status).toBe(503);
      expect(res.body.error).toBe('not_ready');
      expect(typeof res.body.message).toBe('string');
      expect(res.text).not.toMatch(/\bat .+:\d+|select 1/i);
      expect((await api(other.app, 'GET', '/healthz')).status).toBe(200);
    } finally {
      // The database is already closed: closing it again may throw, so remove the data directory here too.
      await other.close().catch(() => {});
      fs.rmSync(other.dataDir, { recursive: true, force: true });
    }
  });
});

describe('metrics without METRICS_TOKEN', () => {
  it('/metrics answers 503 metrics_disabled', async () => {
    const res = await api(t.app, 'GET', '/metrics', { token: 'any-token-0123456789abcdef' });
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('metrics_disabled');
  });
});

describe('API description', () => {
  it('/api/openapi.json is a public OpenAPI 3.1 document with the auth paths', async () => {
    const res = await api(t.app, 'GET', '/api/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    for (const p of [
      '/api/auth/register',
      '/api/auth/login',
      '/api/auth/verify-email',
      '/api/auth/forgot-password',
      '/api/auth/reset-password',
      '/api/auth/change-password',
      '/api/auth/waitlist',
    ]) {
      expect(res.body.paths[p]?.post, p).toBeTruthy();
    }
    expect(res.body.paths['/api/auth/me'].get).toBeTruthy();
    expect(res.body.paths['/api/crm/admin/invites/{code}'].delete).toBeTruthy();
    expect(res.body.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(res.body.paths['/api/auth/login'].post.security).toEqual([]);
  });

  it('/api/reference is a public page', async () => {
    const res = await api(t.app, 'GET', '/api/reference');
    expect(res.status).toBe(200);
    expect(String(res.headers['content-type'])).toMatch(/text\/html/);
    expect(res.text).toMatch(/swagger/i);
  });
});

describe('request ids and unknown routes', () => {
  it('every answer carries x-request-id: a sane incoming id is echoed, otherwise a fresh one', async () => {
    const echoed = await api(t.app, 'GET', '/healthz', { headers: { 'x-request-id': 'client-req_42.a' } });
    expect(echoed.headers['x-request-id']).toBe('client-req_42.a');
    const ids = new Set<string>();
    for (const bad of ['has space', 'a'.repeat(65), 'semi;colon', '']) {
      const res = await api(t.app, 'GET', '/healthz', { headers: { 'x-request-id': bad } });
      const id = String(res.headers['x-request-id']);
      expect(id, bad).toMatch(/^[A-Za-z0-9_-]{8}-[0-9a-z]+$/);
      ids.add(id);
    }
    expect(ids.size).toBe(4);
    const answers = [
      await api(t.app, 'GET', '/api/auth/me'),
      await api(t.app, 'GET', '/api/auth/me', { token: user.token }),
      await api(t.app, 'GET', '/no/such/route'),
      await api(t.app, 'POST', '/api/auth/login', { body: {} }),
      await api(t.app, 'GET', '/api/openapi.json'),
    ];
    for (const res of answers)
      expect(res.headers['x-request-id'], String(res.status)).toMatch(/^[A-Za-z0-9_-]{8}-[0-9a-z]+$/);
  });

  it('an unknown route gives 404 {error:"not_found"} with or without a token; a known path with another method 405', async () => {
    for (const token of [undefined, user.token, 'garbage']) {
      const res = await api(t.app, 'GET', '/api/crm/no-such-thing?x=1', { token });
      expect(res.status).toBe(404);
      expect(res.body.error).toBe('not_found');
      expect(typeof res.body.message).toBe('string');
    }
    const wrongMethod = await api(t.app, 'DELETE', '/healthz');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.body.error).toBe('method_not_allowed');
    expect(wrongMethod.headers.allow).toBe('GET, HEAD');
  });
});

describe('error handler', () => {
  it('renders AppErrors in the envelope and never leaks a 500 cause; the log keeps it', async () => {
    const mem = memoryLogger();
    const app = Fastify({ loggerInstance: mem.log, genReqId: () => 'req-fixed-1' });
    installErrorHandling(app);
    app.get('/boom', async () => {
      throw new Error('connection to postgres://admin:hunter2@db failed: select * from users');
    });
    app.get('/conflict', async () => {
      throw new Conflict('already_there', 'It exists already.', { id: 7 });
    });
    app.get('/upstream', async () => {
      throw new Upstream(503, 'speech_unavailable', 'No speech server is configured.');
    });
    app.get('/app500', async () => {
      throw new AppError(500, 'secret_store_failed', 'The secret could not be saved.');
    });
    app.get('/teapot', async () => {
      throw Object.assign(new Error('internal detail 123'), { statusCode: 418 });
    });
    app.post(
      '/validated',
      {
        schema: {
          body: { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 2 } } },
        },
      },
      async () => ({ ok: true }),
    );
    await app.ready();
    try {
      const boom = await api(app, 'GET', '/boom');
      expect(boom.status).toBe(500);
      expect(boom.body).toEqual({ error: 'internal_error', message: expect.any(String), request_id: 'req-fixed-1' });
      expect(boom.text).not.toMatch(/hunter2|select|postgres|stack|\.ts:\d+/);
      expect(mem.text()).toContain('unexpected failure');

      const conflict = await api(app, 'GET', '/conflict');
      expect(conflict.status).toBe(409);
      expect(conflict.body).toEqual({ error: 'already_there', message: 'It exists already.', id: 7 });
      expect((await api(app, 'GET', '/upstream')).body).toEqual({
        error: 'speech_unavailable',
        message: 'No speech server is configured.',
      });
      const app500 = await api(app, 'GET', '/app500');
      expect(app500.status).toBe(500);
      expect(app500.body).toEqual({ error: 'secret_store_failed', message: 'The secret could not be saved.' });

      const teapot = await api(app, 'GET', '/teapot');
      expect(teapot.status).toBe(418);
      expect(teapot.body.error).toBe('invalid_request');
      expect(teapot.text).not.toContain('internal detail');

      const invalid = await api(app, 'POST', '/validated', { body: { name: 'x' } });
      expect(invalid.status).toBe(400);
      expect(invalid.body.error).toBe('invalid_request');
      expect(invalid.body.details).toEqual([{ path: 'body/name', message: expect.any(String) }]);
      const missing = await api(app, 'POST', '/validated', { body: {} });
      expect(missing.body.details[0].path).toBe('body/name');
      const badJson = await api(app, 'POST', '/validated', {
        payload: '{"name":',
        headers: { 'content-type': 'application/json' },
      });
      expect(badJson.status).toBe(400);
      expect(badJson.body.error).toBe('invalid_json');

      const unknown = await api(app, 'GET', '/nothing');
      expect(unknown.status).toBe(404);
      expect(unknown.body.error).toBe('not_found');
    } finally {
      await app.close();
    }
  });
});

describe('routes listing (npm run routes)', () => {
  it('prints every route as METHOD PATH without a database', async () => {
    const dataDir = fs.mkdtempSync(path.join(path.resolve('.tmp'), 'routes-'));
    try {
      const child = spawn(process.execPath, ['--import', 'tsx', 'server/src/routes-cli.ts'], {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          DATA_DIR: dataDir,
          DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (err += d));
      const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
      expect(code, err).toBe(0);
      const lines = out.trim().split('\n');
      for (const l of lines) expect(l).toMatch(/^(GET|POST|PUT|PATCH|DELETE) \/\S*$/);
      expect(new Set(lines).size).toBe(lines.length);
      for (const r of [
        'POST /api/auth/register',
        'POST /api/auth/login',
        'GET /api/auth/me',
        'GET /healthz',
        'GET /readyz',
        'GET /api/openapi.json',
        'DELETE /api/crm/admin/invites/:code',
        'POST /api/crm/admin/waitlist/:id/approve',
        'PUT /api/crm/account/settings',
      ]) {
        expect(lines, r).toContain(r);
      }
      expect(lines.some((l) => l.startsWith('HEAD '))).toBe(false);
      expect(fs.existsSync(path.join(dataDir, 'pgdata'))).toBe(false);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('logs', () => {
  it('never contain bearer tokens, query tokens, passwords or LLM keys', async () => {
    const mem = memoryLogger('trace');
    const l = await buildTestApp({ logger: mem.log });
    try {
      const u = await createUser(l, { password: 'Pw-in-body-73519' });
      const llmKey = 'sk-ant-api03-LOGSECRET-0123456789';
      const wrong = await api(l.app, 'POST', '/api/auth/login', {
        body: { email: u.email, password: 'Wrong-pw-88412' },
      });
      expect(wrong.status).toBe(401);
      const login = await api(l.app, 'POST', '/api/auth/login', { body: { email: u.email, password: u.password } });
      expect(login.status).toBe(200);
      const issued: string = login.body.token;
      expect((await api(l.app, 'GET', '/api/auth/me', { token: u.token })).status).toBe(200);
      await api(l.app, 'GET', `/api/auth/me?token=${u.token}`);
      await api(l.app, 'GET', `/api/crm/nothing?token=${issued}&x=1`);
      await api(l.app, 'PUT', '/api/crm/account/settings', { token: u.token, body: { llm_key: llmKey } });
      await api(l.app, 'POST', '/api/auth/change-password', {
        token: issued,
        body: { current_password: u.password, new_password: 'New-pw-99107-long' },
      });
      await api(l.app, 'POST', '/api/auth/register', {
        body: { email: 'x@example.com', password: 'Reg-pw-55021', invite_code: 'svc-AAAA-BBBB' },
      });
      await api(l.app, 'POST', '/api/auth/login', {
        payload: '{"email":"a@b.c","password":"Broken-pw-4411',
        headers: { 'content-type': 'application/json' },
      });
      const text = mem.text();
      expect(text).toContain('"msg":"request"');
      expect(text).toContain('token=[redacted]');
      const signature = (tok: string) => tok.split('.')[2];
      for (const secret of [
        u.token,
        signature(u.token),
        issued,
        signature(issued),
        'Pw-in-body-73519',
        'Wrong-pw-88412',
        'New-pw-99107-long',
        'Reg-pw-55021',
        'Broken-pw-4411',
        llmKey,
        'LOGSECRET',
      ]) {
        expect(text, secret).not.toContain(secret);
      }
    } finally {
      await l.close();
    }
  });
});
