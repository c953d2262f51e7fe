/** Unit level of the auth hook: `OPERATOR_EMAIL` marks `req.actor.isOperator` (no route shows it yet). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { DB } from '../db/types.ts';
import { api, buildTestApp, createUser, type TestApp } from '../../test/helpers.ts';
import { loadConfig } from '../config.ts';
import { installAuth, requireActor } from './auth.ts';
import { installErrorHandling } from './errors.ts';

let t: TestApp;
let operator: Awaited<ReturnType<typeof createUser>>;
let other: Awaited<ReturnType<typeof createUser>>;

async function bare(operatorEmail: string | undefined, db: Kysely<DB> = t.db): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  installErrorHandling(app);
  installAuth(app, { db, tokens: t.deps.tokens, operatorEmail });
  app.get('/whoami', async (req) => {
    const a = requireActor(req);
    return { id: a.id, isOperator: a.isOperator, isAdmin: a.isAdmin };
  });
  app.get('/admin-only', { config: { auth: 'admin' } }, async () => ({ secret: 'admin data' }));
  app.get('/open', { config: { auth: 'public' } }, async (req) => ({ actor: req.actor?.id ?? null }));
  await app.ready();
  return app;
}

beforeAll(async () => {
  t = await buildTestApp();
  operator = await createUser(t);
  other = await createUser(t, { role: 'admin' });
});
afterAll(async () => {
  await t?.close();
});

describe('operator account', () => {
  it('OPERATOR_EMAIL (any case) marks that account as operator and no other', async () => {
    const config = loadConfig({ OPERATOR_EMAIL: operator.email.toUpperCase() });
    const app = await bare(config.operatorEmail);
    try {
      const op = await api(app, 'GET', '/whoami', { token: operator.token });
      expect(op.status).toBe(200);
      expect(op.body).toEqual({ id: operator.id, isOperator: true, isAdmin: false });
      const adm = await api(app, 'GET', '/whoami', { token: other.token });
      expect(adm.body).toEqual({ id: other.id, isOperator: false, isAdmin: true });
    } finally {
      await app.close();
    }
  });

  it('privilege needs a verified address: an unverified operator address or admin account acts as a user', async () => {
    const unverifiedOperator = await createUser(t, { email_verified: false });
    const unverifiedAdmin = await createUser(t, { role: 'admin', email_verified: false });
    const app = await bare(unverifiedOperator.email);
    try {
      const op = await api(app, 'GET', '/whoami', { token: unverifiedOperator.token });
      expect(op.body).toEqual({ id: unverifiedOperator.id, isOperator: false, isAdmin: false });
      const adm = await api(app, 'GET', '/whoami', { token: unverifiedAdmin.token });
      expect(adm.body).toEqual({ id: unverifiedAdmin.id, isOperator: false, isAdmin: false });
    } finally {
      await app.close();
    }
  });

  it('without OPERATOR_EMAIL nobody is the operator', async () => {
    const app = await bare(loadConfig({}).operatorEmail);
    try {
      expect((await api(app, 'GET', '/whoami', { token: operator.token })).body.isOperator).toBe(false);
    } finally {
      await app.close();
    }
  });

  it('the hook sets the actor on public routes when a token is given and refuses protected ones without', async () => {
    const app = await bare(undefined);
    try {
      expect((await api(app, 'GET', '/open')).body).toEqual({ actor: null });
      expect((await api(app, 'GET', '/open', { token: operator.token })).body).toEqual({ actor: operator.id });
      expect((await api(app, 'GET', '/open', { token: 'garbage' })).status).toBe(200);
      const anon = await api(app, 'GET', '/whoami');
      expect(anon.status).toBe(401);
      expect(anon.body.error).toBe('unauthorized');
    } finally {
      await app.close();
    }
  });
});

describe('the auth hook fails closed', () => {
  it('with the user store unreachable no token is accepted on its claims: 503 auth_unavailable; public routes go on without a caller', async () => {
    // A real PostgreSQL client pointed at a port where no server listens.
    const pool = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none', connectionTimeoutMillis: 500 });
    const down = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    const app = await bare(undefined, down);
    try {
      for (const url of ['/whoami', '/admin-only']) {
        const r = await api(app, 'GET', url, { token: other.token });
        expect([url, r.status, r.body.error]).toEqual([url, 503, 'auth_unavailable']);
        expect(r.text).not.toContain('admin data');
      }
      expect((await api(app, 'GET', '/open', { token: other.token })).body).toEqual({ actor: null });
      expect((await api(app, 'GET', '/whoami')).status).toBe(401);
    } finally {
      await app.close();
      await down.destroy();
    }
  });
});

describe('user cache of the auth hook', () => {
  const row = {
    id: 7,
    email: 'a@b.c',
    name: null,
    role: 'user' as const,
    plan: 'free',
    email_verified: true,
    password_version: 0,
    chat_id: '7',
    created_at: new Date(),
  };

  it('keeps a row for its time to live and forgets it on invalidate', async () => {
    const { createUserCache } = await import('./auth.ts');
    const cache = createUserCache({ ttlMs: 50 });
    cache.set(row, cache.mark());
    expect(cache.get(7)).toBe(row);
    cache.invalidate(7);
    expect(cache.get(7)).toBeUndefined();
    cache.set(row, cache.mark());
    await new Promise((r) => setTimeout(r, 80));
    expect(cache.get(7)).toBeUndefined();
  });

  it('does not keep a row read while a change was announced, and follows the bus', async () => {
    const { createUserCache } = await import('./auth.ts');
    const { createLocalBus } = await import('../lib/bus.ts');
    const bus = createLocalBus({ warn() {}, error() {} });
    const cache = createUserCache({ bus });
    const mark = cache.mark();
    // Another request (or instance) changes user 7 while this one is reading its old row.
    await bus.publish('user.changed', { id: 7 });
    cache.set(row, mark);
    expect(cache.get(7)).toBeUndefined();
    cache.set(row, cache.mark());
    expect(cache.get(7)).toBe(row);
    await cache.changed(7);
    expect(cache.get(7)).toBeUndefined();
  });
});
