/**
 * Chaos: the service as real processes (`node server/start.js`) killed with SIGKILL while agent runs are in
 * flight, on the embedded database and on PostgreSQL, and two instances on PostgreSQL of which one is killed
 * (docs/ARCHITECTURE.md, "Crash recovery and instance leases"). The model (the LLM stand-in) answers each call
 * slowly: first a create_issue tool call, then the reply.
 *
 * After the last restart every run is terminal within 15 s; every accepted message has exactly one reply (or its
 * run failed with a reason); no issue is created twice; a model call is made again only by a replay (a run taken
 * back); every call is charged once (a completed call by its usage row, a cut one by its reservation, marked
 * estimated) and no reservation is left; each replay is an activity event and a log line; and the log holds
 * what the killed processes wrote before the kill.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { openDatabase, type Database } from './db/database.ts';
import { createServerDatabase } from '../test/helpers.ts';
import { startLlmStandIn } from '../test/standins/llm.ts';
import { client, logLines, startService, tail, type ServiceProcess } from '../test/service-process.ts';

const onPostgres = inject('dbKind') === 'postgres';
/** Each model call takes this long (ms). */
const CALL_MS = 700;
const LEASE_MS = 2000;
const dirs: string[] = [];
const procs: ServiceProcess[] = [];
let llm: Awaited<ReturnType<typeof startLlmStandIn>>;

/**
 * `[msg-<test>-<n>]` of the message a model request answers (the last one in its last user text); the stand-in
 * serves every test of the file, so markers name their test.
 */
function markerOf(body: any): string | null {
  const texts = (body.messages ?? [])
    .filter((m: any) => m.role === 'user')
    .map((m: any) =>
      typeof m.content === 'string'
        ? m.content
        : m.content
            .filter((b: any) => b.type === 'text')
            .map((b: any) => b.text)
            .join(''),
    )
    .filter((t: string) => t.includes('[msg-'));
  const all = [...(texts.at(-1) ?? '').matchAll(/\[(msg-\w+-\d+)\]/g)];
  return all.length ? all.at(-1)![1] : null;
}
const afterTool = (body: any) => {
  const last = body.messages?.at(-1);
  return Array.isArray(last?.content) && last.content.some((b: any) => b.type === 'tool_result');
};

beforeAll(async () => {
  llm = await startLlmStandIn({
    responder: (req) => {
      const m = markerOf(req.body);
      return afterTool(req.body)
        ? { delayMs: CALL_MS, content: [{ type: 'text', text: `Reply to ${m}.` }] }
        : {
            delayMs: CALL_MS,
            content: [{ type: 'tool_use', name: 'create_issue', input: { title: `Issue for ${m}` } }],
          };
    },
  });
});
afterAll(async () => {
  for (const p of procs) await p.kill9();
  await llm?.close();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const d = fs.mkdtempSync(path.join(path.resolve('.tmp'), `${prefix}-`));
  dirs.push(d);
  return d;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const random = (lo: number, hi: number) => lo + Math.random() * (hi - lo);

/** The messages sent and what became of them. */
interface Sent {
  marker: string;
  runId: number;
}

type Api = ReturnType<typeof client>;

/** Send `n` messages round-robin to `workers`, numbered from `from`. @returns the accepted ones. */
async function send(
  api: Api,
  tag: string,
  project: string,
  workers: number[],
  from: number,
  n: number,
): Promise<Sent[]> {
  const out: Sent[] = [];
  for (let i = from; i < from + n; i++) {
    const marker = `msg-${tag}-${i}`;
    const r = await api.message(project, workers[i % workers.length], `Please file [${marker}] for me.`);
    if (r.status === 202) out.push({ marker, runId: r.runIds[0] });
  }
  return out;
}

/** Poll until no run of `project` is queued or running. @returns ms since `since` */
async function allTerminal(api: Api, project: string, since: number, limitMs: number): Promise<number> {
  for (;;) {
    const runs = await api.runs(project);
    const live = runs.filter((r) => r.status === 'queued' || r.status === 'running');
    if (!live.length) return performance.now() - since;
    if (performance.now() - since > limitMs)
      throw new Error(`runs still live after ${limitMs} ms: ${JSON.stringify(live.map((r) => [r.id, r.status]))}`);
    await sleep(100);
  }
}

/**
 * The runs that were running at least 300 ms before a kill (their `run started` line was due on disk by then:
 * LOG_FLUSH_MS is 100) must have that line in the log.
 */
async function runningNow(api: Api, project: string) {
  const at = Date.now();
  const ids = (await api.runs(project)).filter((r) => r.status === 'running').map((r) => r.id as number);
  return { at, ids };
}

/** Every invariant of the module header, read from the database after the service stopped. */
async function checkOutcome(
  db: Database['db'],
  sent: Sent[],
  opts: { kills: number; logFile: string; killTimes: number[] },
) {
  const runs = await db
    .selectFrom('agent_runs')
    .select(['id', 'status', 'error', 'error_message', 'turns', 'replays', 'reply_message_id', 'finished_at'])
    .execute();
  const byId = new Map(runs.map((r) => [r.id, r]));
  const replies = await db
    .selectFrom('chat_messages')
    .select(['run_id', sql<number>`count(*)::int`.as('n')])
    .where('role', '=', 'assistant')
    .groupBy('run_id')
    .execute();
  const replyCount = new Map(replies.map((r) => [r.run_id, Number(r.n)]));
  const issues = await db.selectFrom('issues').select('title').execute();
  const usage = await db
    .selectFrom('token_usage')
    .select(['run_id', 'estimated', 'total_tokens'])
    .where('run_id', 'is not', null)
    .execute();
  const events = await db
    .selectFrom('activity_log')
    .select(['type', sql<number>`(payload->>'run_id')::int`.as('run_id')])
    .where('type', 'in', ['run_replayed', 'run_interrupted'])
    .execute();
  const lines = logLines(opts.logFile);
  const logged = (msg: string, runId: number) => lines.some((l) => l.msg?.startsWith(msg) && l.run_id === runId);
  const nearKill = (t: Date | null) => !!t && opts.killTimes.some((k) => +t <= k && +t > k - 600);

  let succeeded = 0;
  for (const s of sent) {
    const run = byId.get(s.runId)!;
    const why = `${s.marker} run ${s.runId}: ${JSON.stringify(run)}`;
    expect(['succeeded', 'failed'], why).toContain(run.status);
    const madeIssues = issues.filter((i) => i.title === `Issue for ${s.marker}`).length;
    const calls = llm.modelCalls().filter((c) => markerOf(c.body) === s.marker);
    const rows = usage.filter((u) => u.run_id === s.runId);
    if (run.status === 'succeeded') {
      succeeded++;
      expect(replyCount.get(s.runId), why).toBe(1);
      expect(madeIssues, why).toBe(1);
      // Completed calls are metered by their usage rows: the run's two turns, and a call answered just before a
      // kill whose answer was not stored yet (made again by the replay; both were billed).
      const real = rows.filter((u) => !u.estimated).length;
      expect(real, why).toBeGreaterThanOrEqual(run.turns);
      expect(real, why).toBeLessThanOrEqual(run.turns + run.replays);
      expect(run.turns, why).toBe(2);
    } else {
      expect(run.error, why).toBeTruthy();
      expect(run.error_message, why).toBeTruthy();
      expect(replyCount.get(s.runId) ?? 0, why).toBe(0);
      expect(madeIssues, why).toBeLessThanOrEqual(1);
    }
    expect(run.replays, why).toBeLessThanOrEqual(opts.kills);
    // A call is made again only by a replay: per turn, at most one request more than the run's replays.
    for (const turn of [false, true]) {
      const these = calls.filter((c) => afterTool(c.body) === turn);
      const detail = these.map((c) => `retry ${c.headers['x-stainless-retry-count'] ?? '?'}`).join(', ');
      const log = lines.filter((l) => l.run_id === s.runId).map((l) => `${l.pid} ${l.msg}`);
      expect(
        these.length,
        `${why}: calls of turn ${turn ? 2 : 1}: ${detail}; log: ${log.join(' | ')}`,
      ).toBeLessThanOrEqual(1 + run.replays);
    }
    // Every request was charged once: by its usage row or, cut by a kill, by its reservation (estimated).
    expect(rows.length, why).toBeGreaterThanOrEqual(calls.length);
    expect(rows.length, why).toBeLessThanOrEqual(calls.length + opts.kills);
    // Each replay is an activity event.
    const ev = events.filter((e) => Number(e.run_id) === s.runId);
    expect(ev.filter((e) => e.type === 'run_replayed').length, why).toBe(run.replays);
    if (run.replays) expect(logged('run requeued', s.runId), why).toBe(true);
    // The log kept the run's life (lines due on disk before a kill; a line of the last 600 ms may be cut).
    expect(logged('run started', s.runId) || logged('run resumed', s.runId), why).toBe(true);
    if (!nearKill(run.finished_at))
      expect(logged('run ended', s.runId) || logged('run failed', s.runId), why).toBe(true);
  }
  expect(await db.selectFrom('token_reservations').select('id').execute()).toEqual([]);
  return { succeeded, failed: sent.length - succeeded, replays: runs.reduce((a, r) => a + r.replays, 0) };
}

/** Kill -9 a single instance `kills` times while runs are in flight, then SIGTERM it once; restart each time. */
async function singleInstanceChaos(env: Record<string, string>, dataDir: string, kills: number) {
  const logFile = path.join(dataDir, 'service.log');
  const base = { LLM_PROVIDER: 'anthropic', LLM_BASE_URL: llm.anthropicUrl, LOG_FLUSH_MS: '100', ...env };
  let svc = await startService(dataDir, logFile, base);
  procs.push(svc);
  const port = svc.port;
  const api = client(() => svc.url);
  await api.login();
  const workers = await api.setup('chaos', 3, ['issues']);
  const sent: Sent[] = [];
  const killTimes: number[] = [];
  const restarts: number[] = [];
  let n = 0;
  for (let k = 0; k <= kills; k++) {
    sent.push(...(await send(api, 'one', 'chaos', workers, n, 6)));
    n += 6;
    await sleep(random(300, 1200));
    const seen = await runningNow(api, 'chaos');
    await sleep(300);
    const before = logLines(logFile).length;
    if (k < kills) {
      killTimes.push(Date.now());
      await svc.kill9();
    } else {
      // The last stop is a SIGTERM: the instance hands its runs back before it exits.
      expect(await svc.term()).toBe(0);
    }
    // What the killed process logged before the kill is on disk: the start of every run seen running.
    const lines = logLines(logFile);
    for (const id of seen.ids)
      expect(
        lines.some((l) => (l.msg === 'run started' || l.msg === 'run resumed') && l.run_id === id),
        `run ${id} (log ${lines.length} lines, ${before} before the stop)`,
      ).toBe(true);
    const t0 = performance.now();
    svc = await startService(dataDir, logFile, base, { port });
    procs.push(svc);
    restarts.push(performance.now() - t0);
    await api.login();
  }
  const recovery = await allTerminal(api, 'chaos', performance.now(), 15_000);
  const runs = await api.runs('chaos');
  expect(runs.filter((r) => r.status === 'running' || r.status === 'queued')).toEqual([]);
  expect(await svc.term()).toBe(0);
  const handedBack = logLines(logFile).filter(
    (l) => l.msg?.startsWith('run requeued') && l.reason === 'instance_stopping',
  );
  return { sent, killTimes, logFile, recovery, restarts, handedBack: handedBack.length };
}

describe('kill -9 with runs in flight: every run resumes or fails with a reason, exactly once', () => {
  it(`one instance on the ${onPostgres ? 'PostgreSQL server' : 'embedded database'}, killed twice and stopped once`, async () => {
    const dataDir = tempDir('chaos');
    const server = onPostgres ? await createServerDatabase() : undefined;
    try {
      const r = await singleInstanceChaos(server ? { DATABASE_URL: server.url } : {}, dataDir, 2);
      const database = await openDatabase({ url: server?.url, dataDir });
      try {
        const outcome = await checkOutcome(database.db, r.sent, {
          kills: 3,
          logFile: r.logFile,
          killTimes: r.killTimes,
        });
        console.info(
          `chaos (${onPostgres ? 'postgres' : 'pglite'}): ${r.sent.length} messages, ${outcome.succeeded} succeeded, ${outcome.failed} failed with a reason, ${outcome.replays} replays, ${r.handedBack} handed back at SIGTERM; restarts ${r.restarts.map((x) => Math.round(x)).join('/')} ms; last restart → every run terminal ${Math.round(r.recovery)} ms`,
        );
      } finally {
        await database.close();
      }
    } finally {
      await server?.drop();
    }
  }, 600_000);

  it.skipIf(!onPostgres)(
    'two instances on PostgreSQL: the survivor takes the killed one’s runs within its lease',
    async () => {
      const server = await createServerDatabase();
      const dataDir = tempDir('chaos-two');
      const logFile = path.join(dataDir, 'service.log');
      const env = {
        LLM_PROVIDER: 'anthropic',
        LLM_BASE_URL: llm.anthropicUrl,
        DATABASE_URL: server.url,
        INSTANCE_LEASE_MS: String(LEASE_MS),
        LOG_FLUSH_MS: '100',
      };
      try {
        // Both on this machine: each process is alive, so neither takes the other over until its lease lapses.
        const a = await startService(dataDir, logFile, { ...env, INSTANCE_NAME: 'a' });
        procs.push(a);
        const b = await startService(dataDir, logFile, { ...env, INSTANCE_NAME: 'b' });
        procs.push(b);
        const apiA = client(() => a.url);
        const apiB = client(() => b.url);
        await apiA.login();
        await apiB.login();
        const workers = await apiA.setup('chaos', 4, ['issues']);
        const sent = [
          ...(await send(apiA, 'two', 'chaos', workers, 0, 6)),
          ...(await send(apiB, 'two', 'chaos', workers, 6, 6)),
        ];
        await sleep(random(600, 1200));
        expect((await apiB.runs('chaos')).filter((r) => r.status === 'running').length).toBeGreaterThan(0);
        const killedAt = performance.now();
        const killTime = Date.now();
        await a.kill9();
        // B is not restarted: it finds A's lease lapsed and takes its runs back.
        const recovery = await allTerminal(apiB, 'chaos', killedAt, 15_000);
        expect(await b.term()).toBe(0);
        const database = await openDatabase({ url: server.url, dataDir });
        try {
          const outcome = await checkOutcome(database.db, sent, { kills: 1, logFile, killTimes: [killTime] });
          const taken = logLines(logFile).filter((l) => l.msg?.startsWith('instances found dead'));
          expect(taken.length, tail(logFile)).toBeGreaterThan(0);
          console.info(
            `chaos (two instances): ${sent.length} messages, ${outcome.succeeded} succeeded, ${outcome.failed} failed with a reason, ${outcome.replays} replays; kill → every run terminal ${Math.round(recovery)} ms (lease ${LEASE_MS} ms)`,
          );
        } finally {
          await database.close();
        }
      } finally {
        await server.drop();
      }
    },
    600_000,
  );
});
