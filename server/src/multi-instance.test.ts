/**
 * Several instances on one PostgreSQL database and one DATA_DIR, behind a round-robin load balancer, answer
 * as one instance would: a password change, an e-mail verification, the signup limit, a job, the daily
 * retention purge, a streamed chat and a cancel, each seen the same whichever instance serves the next
 * request; and instances starting at the same moment on an empty database all become ready.
 *
 * Each instance is the real app (`buildApp`) with its own pool, event bus, job queue and caches, listening
 * on 127.0.0.1; the balancer (server/test/balancer.ts) forwards each request to the next one in turn.
 * The embedded database belongs to one process, so these run on the PostgreSQL test server only
 * (`TEST_DATABASE_URL`).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from 'kysely';
import { buildTestCluster, createProject, createUser, type TestInstance } from '../test/helpers.ts';
import { startBalancer } from '../test/balancer.ts';
import { startLlmStandIn } from '../test/standins/llm.ts';
import { createWorker, giveKey, waitFor } from '../test/runtime-fixtures.ts';
import { createBus } from './lib/bus.ts';
import { createJobQueue, type JobQueue } from './jobs/queue.ts';
import { silentLogger as silent } from './lib/logger.ts';
import { migrations } from './db/migrations/index.ts';
import type { Database } from './db/database.ts';

const onPostgres = inject('dbKind') === 'postgres';
if (!onPostgres)
  console.info(
    'multi-instance tests skipped: several instances need one PostgreSQL server (set TEST_DATABASE_URL); the embedded database belongs to one process',
  );

/**
 * A real job queue that consumes every job but agent runs (an instance that only serves requests), so a run
 * sent from this instance executes on another one.
 */
function queueWithoutRuns(database: Database) {
  const bus = createBus(database, silent);
  const q = createJobQueue(database, silent, bus);
  const jobs: JobQueue = {
    get started() {
      return q.started;
    },
    define: (name, handler, opts) => (name === 'runtime.run' ? q.declare(name) : q.define(name, handler, opts)),
    declare: (name) => q.declare(name),
    schedule: (name, cron, data, opts) => q.schedule(name, cron, data, opts),
    send: (name, data, opts) => q.send(name, data, opts),
    start: () => q.start(),
    stop: () => q.stop(),
    pending: (name) => q.pending(name),
    depths: () => q.depths(),
    forget: (name, field, values, tx) => q.forget(name, field, values, tx),
    complete: (name, ids, tx) => q.complete(name, ids, tx),
    pause: (name) => q.pause(name),
  };
  return { bus, jobs };
}

/** Read an SSE response as it arrives: `next(event)` resolves with the first not yet taken event of that name. */
function sseReader(res: Response) {
  const events: Array<{ event: string; data: any }> = [];
  const waiters: Array<() => void> = [];
  let ended = false;
  void (async () => {
    const decoder = new TextDecoder();
    let buf = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buf += decoder.decode(chunk, { stream: true });
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const ev = /^event: (.*)$/m.exec(block);
        const data = /^data: (.*)$/m.exec(block);
        if (ev && data) events.push({ event: ev[1], data: JSON.parse(data[1]) });
      }
      for (const w of waiters.splice(0)) w();
    }
    ended = true;
    for (const w of waiters.splice(0)) w();
  })();
  let taken = 0;
  return {
    events,
    async next(event: string, ms = 10_000) {
      const until = Date.now() + ms;
      for (;;) {
        const i = events.findIndex((e, k) => k >= taken && e.event === event);
        if (i >= 0) {
          taken = i + 1;
          return events[i];
        }
        if (ended || Date.now() > until) throw new Error(`no ${event} event (got ${JSON.stringify(events)})`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 50);
        });
      }
    },
  };
}

describe.skipIf(!onPostgres)('two instances on one PostgreSQL behind a round-robin balancer', () => {
  let cluster: Awaited<ReturnType<typeof buildTestCluster>>;
  let lb: Awaited<ReturnType<typeof startBalancer>>;
  let llm: Awaited<ReturnType<typeof startLlmStandIn>>;
  let A: TestInstance;
  let B: TestInstance;
  let admin: Awaited<ReturnType<typeof createUser>>;
  /** Documents loaded by index jobs: which instance ran the job, for which document. */
  const loads: Array<{ instance: number; id: string }> = [];

  beforeAll(async () => {
    llm = await startLlmStandIn();
    cluster = await buildTestCluster(2, {
      env: { LLM_BASE_URL: llm.anthropicUrl, TRUST_PROXY: '1' },
      services: (i) => ({
        loaders: {
          transcript: async (_project, id) => {
            loads.push({ instance: i, id });
            return { title: id, text: `Transcript ${id}.`, scope: 'global' };
          },
        },
      }),
      // B executes no agent runs: a run sent through B executes on A.
      overrides: (i, database) => (i === 1 ? queueWithoutRuns(database) : {}),
    });
    [A, B] = cluster.instances;
    lb = await startBalancer(cluster.instances.map((x) => x.url));
    admin = await createUser(A, { role: 'admin' });
  });
  afterAll(async () => {
    await lb?.close();
    await cluster?.close();
    await llm?.close();
  });

  /** One request through the balancer (JSON in and out). */
  async function call(
    method: string,
    path: string,
    opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
  ) {
    const res = await fetch(`${lb.url}${path}`, {
      method,
      headers: {
        ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
        ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...opts.headers,
      },
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, instance: lb.served.at(-1)! };
  }

  /** `GET /api/auth/me` once on each instance, in turn. */
  const meOnBoth = async (token: string) => {
    const rs = [await call('GET', '/api/auth/me', { token }), await call('GET', '/api/auth/me', { token })];
    expect(rs.map((r) => r.instance).sort()).toEqual([0, 1]);
    return rs;
  };

  it('after a password change the old token is refused on both instances at once, the new one accepted', async () => {
    const u = await createUser(A);
    // Both instances have just checked (and cached) the user with the old password version.
    for (const r of await meOnBoth(u.token)) expect(r.status).toBe(200);
    const changed = await call('POST', '/api/auth/change-password', {
      token: u.token,
      body: { current_password: u.password, new_password: 'a brand new passphrase' },
    });
    expect(changed.status).toBe(200);
    for (const r of await meOnBoth(u.token)) {
      expect(r.status).toBe(401);
      expect(r.body.error).toBe('password_changed');
    }
    for (const r of await meOnBoth(changed.body.token)) expect(r.status).toBe(200);
  });

  it('a verified e-mail shows email_verified:true on both instances at once', async () => {
    const u = await createUser(A, { email_verified: false });
    for (const r of await meOnBoth(u.token)) expect(r.body.email_verified).toBe(false);
    expect((await call('POST', '/api/auth/resend-verification', { token: u.token })).status).toBe(200);
    const mail = (await A.deps.mailer.outbox(50)).items.find((m) => m.to === u.email)!;
    const token = /verify-email\?token=([A-Za-z0-9_-]+)/.exec(mail.text)![1];
    expect((await call('POST', '/api/auth/verify-email', { body: { token } })).status).toBe(200);
    for (const r of await meOnBoth(u.token)) expect(r.body.email_verified).toBe(true);
  });

  it('the signup limit (3 per address per 24 h) counts signups made on either instance', async () => {
    const codes = (await call('POST', '/api/crm/admin/invites', { token: admin.token, body: { count: 9 } })).body
      .codes as string[];
    const register = (ip: string, code: string) =>
      call('POST', '/api/auth/register', {
        headers: { 'x-forwarded-for': ip },
        body: { email: `signup.${code}@example.com`, password: 'a fine passphrase', invite_code: code },
      });
    // One after another: the instances alternate.
    const serial = [];
    for (const code of codes.slice(0, 4)) serial.push(await register('198.51.100.7', code));
    expect(serial.map((r) => r.status)).toEqual([201, 201, 201, 429]);
    expect(serial[3].body.error).toBe('signup_limit');
    expect(new Set(serial.map((r) => r.instance)).size).toBe(2);
    // All at once on both instances: still exactly three.
    const racing = await Promise.all(codes.slice(4, 9).map((code) => register('198.51.100.8', code)));
    expect(racing.map((r) => r.status).sort()).toEqual([201, 201, 201, 429, 429]);
  });

  it('a job runs once although both instances poll its queue', async () => {
    const ids = Array.from({ length: 12 }, (_, i) => `job-once-${i}`);
    for (const [i, id] of ids.entries())
      await (i % 2 ? B : A).deps.jobs.send('knowledge.index', { project_id: null, doc_type: 'transcript', doc_id: id });
    await waitFor(async () => ids.every((id) => loads.some((l) => l.id === id)), 20_000);
    await waitFor(async () => (await A.deps.jobs.pending('knowledge.index')) === 0, 20_000);
    await new Promise((r) => setTimeout(r, 1500)); // a second execution would have started by now
    const ran = loads.filter((l) => ids.includes(l.id));
    expect(ran.map((l) => l.id).sort()).toEqual([...ids].sort());
  });

  it('the daily retention purge is claimed and run once when both instances schedule it at the same moment', async () => {
    const day = '2031-02-03';
    const at = new Date(`${day}T04:00:00Z`);
    const claims = await Promise.all([A, B, A, B].map((x) => x.services.privacy.scheduleRetention(at)));
    expect(claims.filter(Boolean)).toHaveLength(1);
    await waitFor(
      () =>
        A.db
          .selectFrom('retention_runs')
          .select('day')
          .where('day', '=', day)
          .where('finished_at', 'is not', null)
          .executeTakeFirst(),
      20_000,
    );
    const runs = await A.db.selectFrom('retention_runs').select('day').where('day', '=', day).execute();
    expect(runs).toHaveLength(1);
    const jobs = await sql<{ n: number }>`select count(*)::int as n from pgboss.job
      where name = 'privacy.retention' and data->>'day' = ${day}`.execute(A.db);
    expect(Number(jobs.rows[0].n)).toBe(1);
  });

  /** A project of a user with an LLM key and one worker. */
  async function chatSetup() {
    const u = await createUser(A);
    const p = await createProject(A, u.id);
    await giveKey(A, u.id);
    const w = await createWorker(A, p.id, { label: 'Dev', role: 'developer' });
    return { u, p, w };
  }

  it('a chat streamed by instance B follows, as it happens, the run that instance A executes', async () => {
    const { u, p, w } = await chatSetup();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let calls = 0;
    llm.respond(async () => {
      if (++calls === 1)
        return {
          content: [
            { type: 'text', text: 'Filing it now.' },
            { type: 'tool_use', name: 'create_issue', input: { title: 'Footer link broken' } },
          ],
        };
      await gate;
      return { content: [{ type: 'text', text: 'Done: issue filed.' }] };
    });
    lb.pin(1);
    const res = await fetch(`${lb.url}/api/crm/projects/${p.name}/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${u.token}` },
      body: JSON.stringify({ text: 'the footer link is broken', worker_id: w.id }),
    });
    expect(res.status).toBe(200);
    expect(lb.served.at(-1)).toBe(1);
    const sse = sseReader(res);
    // While A's run waits on its second model call, B's stream already has the first turn's text and tool result.
    const first = await sse.next('text_delta');
    expect('Filing it now.'.startsWith(first.data.delta)).toBe(true);
    const tool = await sse.next('tool_result');
    expect(tool.data).toMatchObject({ tool: 'create_issue', is_error: false, title: 'Footer link broken' });
    const run = await A.db
      .selectFrom('agent_runs')
      .select(['id', 'status', 'instance_id'])
      .where('worker_id', '=', w.id)
      .executeTakeFirstOrThrow();
    expect(run.status).toBe('running');
    expect(run.instance_id).toBe(A.services.runtime.instanceId);
    release();
    const done = await sse.next('done');
    expect(done.data).toMatchObject({ run_id: run.id, status: 'succeeded' });
    const text = sse.events
      .filter((e) => e.event === 'text_delta')
      .map((e) => e.data.delta)
      .join('');
    expect(text).toBe('Filing it now.Done: issue filed.');
  });

  it('a cancel asked on instance B stops the model call under way on instance A at once', async () => {
    const { u, p, w } = await chatSetup();
    llm.respond(() => ({ content: [{ type: 'text', text: 'too late' }], delayMs: 20_000 }));
    const before = llm.modelCalls().length;
    lb.pin(1);
    const sent = await call('POST', `/api/crm/projects/${p.name}/message`, {
      token: u.token,
      body: { worker_id: w.id, text: 'take your time' },
    });
    expect(sent.status).toBe(202);
    const runId = sent.body.run_ids[0] as number;
    await waitFor(async () => llm.modelCalls().length > before, 10_000);
    const t0 = Date.now();
    lb.pin(1);
    const cancel = await call('POST', `/api/crm/projects/${p.name}/runs/${runId}/cancel`, { token: u.token });
    expect(cancel.status).toBe(200);
    const ended = await waitFor(async () => {
      const r = await call('GET', `/api/crm/projects/${p.name}/runs/${runId}`, { token: u.token });
      return ['queued', 'running'].includes(r.body.status) ? undefined : r.body;
    }, 10_000);
    expect(ended.status).toBe('cancelled');
    expect(Date.now() - t0).toBeLessThan(5000);
    llm.respond(() => ({ content: [{ type: 'text', text: 'ok' }] }));
  });
});

describe.skipIf(!onPostgres)('instances starting at the same moment', () => {
  it('three instances starting together on an empty database all become ready, and bootstrap once', async () => {
    const admin = { email: 'boot.admin@example.com', password: 'a bootstrap passphrase' };
    const c = await buildTestCluster(3, {
      empty: true,
      env: { ADMIN_EMAIL: admin.email, ADMIN_PASSWORD: admin.password },
    });
    try {
      for (const x of c.instances) {
        const ready = await fetch(`${x.url}/readyz`);
        expect(ready.status).toBe(200);
        const login = await fetch(`${x.url}/api/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(admin),
        });
        expect(login.status).toBe(200);
        expect(x.deps.jobs.started).toBe(true);
        expect(x.deps.bus.live).toBe(true);
        // No connection of any pool was left inside a failed transaction by a lost race.
        await Promise.all(Array.from({ length: 10 }, () => x.database.executeSql('select 1')));
        await Promise.all(Array.from({ length: 10 }, () => sql`select 1`.execute(x.db)));
      }
      const db = c.instances[0].db;
      const applied = await sql<{ n: number }>`select count(*)::int as n from kysely_migration`.execute(db);
      expect(applied.rows[0].n).toBe(Object.keys(migrations).length);
      const admins = await db.selectFrom('users').select('id').where('email', '=', admin.email).execute();
      expect(admins).toHaveLength(1);
      const queues = await sql<{ name: string }>`select name from pgboss.queue order by name`.execute(db);
      expect(queues.rows.map((r) => r.name)).toEqual([
        '__pgboss__send-it',
        'approvals.expire',
        'approvals.notify',
        'billing.renew',
        'knowledge.index',
        'mail.retry',
        'notes.process',
        'privacy.after_erase',
        'privacy.retention',
        'privacy.retention_check',
        'runtime.run',
        'transcripts.pump',
      ]);
    } finally {
      await c.close();
    }
  });
});
