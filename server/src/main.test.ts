/**
 * `npm start` as real processes: the embedded database belongs to one process (a lock file with
 * the owner's pid, taken over after a crash, won by one of two processes starting at once), a taken port
 * stops the start before the database is opened, and SIGTERM to `npm start` finishes in-flight requests and
 * stops the whole process tree within SHUTDOWN_TIMEOUT_MS (a second signal or the bound exits at once).
 */
import { afterAll, describe, expect, inject, it } from 'vitest';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { startLlmStandIn, type ScriptedReply } from '../test/standins/llm.ts';
import { freePort } from '../test/net.ts';
import { createServerDatabase } from '../test/helpers.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const ADMIN = { email: 'admin@example.com', password: 'admin-password-123' };
const dirs: string[] = [];
const procs: ChildProcess[] = [];

afterAll(() => {
  for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const d = fs.mkdtempSync(path.join(path.resolve('.tmp'), `${prefix}-`));
  dirs.push(d);
  return d;
}

/** Whether nothing listens on the port any more (it can be bound again). */
async function portFree(port: number): Promise<boolean> {
  const srv = net.createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(port, '127.0.0.1', resolve);
    });
    return true;
  } catch {
    return false;
  } finally {
    await new Promise((r) => srv.close(r));
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Direct children of a running process (Linux). */
const childrenOf = (pid: number): number[] => {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
};

interface Server {
  proc: ChildProcess;
  port: number;
  url: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
  /** Wait for /readyz 200. @returns false when the process exited first. */
  ready: (timeoutMs?: number) => Promise<boolean>;
}

/**
 * Start the service on `dataDir`: `npm start` itself, or `node server/start.js` (what `npm start` runs, with
 * no npm wrapper writing to stderr).
 */
async function start(
  dataDir: string,
  /** `group`: its own process group (pgid = its pid), to signal it as a terminal's Ctrl-C does. */
  opts: { npm?: boolean; port?: number; env?: Record<string, string>; group?: boolean } = {},
) {
  const port = opts.port ?? (await freePort());
  const proc = spawn(opts.npm ? 'npm' : process.execPath, opts.npm ? ['start', '--silent'] : ['server/start.js'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      BREACH_CHECK_URL: 'off',
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: opts.group ?? false,
  });
  procs.push(proc);
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (c) => resolve(c)));
  const url = `http://127.0.0.1:${port}`;
  const server: Server = {
    proc,
    port,
    url,
    stdout: () => out,
    stderr: () => err,
    exited,
    async ready(timeoutMs = 90_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline && proc.exitCode === null) {
        try {
          const res = await fetch(`${url}/readyz`);
          await res.arrayBuffer();
          if (res.status === 200) return true;
        } catch {
          /* not listening yet */
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      return false;
    },
  };
  return server;
}

/** The exit code, or 'timeout' when the process is still running after `ms`. */
const exitWithin = (s: Server, ms: number) =>
  Promise.race([s.exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms))]);

const lockOwner = (dataDir: string): number =>
  JSON.parse(fs.readFileSync(path.join(dataDir, 'pgdata.lock'), 'utf8')).pid;

async function adminToken(s: Server): Promise<string> {
  const res = await fetch(`${s.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ADMIN),
  });
  expect(res.status, s.stdout()).toBe(200);
  return ((await res.json()) as { token: string }).token;
}

async function invites(s: Server, token: string): Promise<string[]> {
  const res = await fetch(`${s.url}/api/crm/admin/invites`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { invites: Array<{ code: string }> }).invites.map((i) => i.code);
}

/** A data directory with a migrated embedded database, made once by a real start and stop. */
let seeded: string | undefined;
async function seededCopy(prefix: string): Promise<string> {
  if (!seeded) {
    seeded = tempDir('seed');
    const s = await start(seeded);
    expect(await s.ready(), s.stdout() + s.stderr()).toBe(true);
    // The first start talks: one line, written out at once, with the address, the database and each optional tool.
    const deadline = Date.now() + 5_000;
    while (!s.stdout().includes('ready: open') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const line = s
      .stdout()
      .split('\n')
      .find((l) => l.includes('ready: open'));
    expect(line, s.stdout()).toBeDefined();
    const msg = JSON.parse(line!).msg as string;
    expect(msg).toContain(`open ${s.url} | database: embedded PostgreSQL (PGlite, pgvector) in ${seeded}`);
    for (const tool of ['ffmpeg', 'ffprobe', 'bubblewrap', 'git', 'yt-dlp', 'docker'])
      expect(msg).toContain(`| ${tool}: `);
    s.proc.kill('SIGTERM');
    expect(await exitWithin(s, 20_000)).toBe(0);
  }
  const d = tempDir(prefix);
  fs.cpSync(seeded, d, { recursive: true });
  return d;
}

describe('start-up: the port and the data directory', () => {
  it('a taken port stops the start with one line, exit code 1, before DATA_DIR is touched', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as net.AddressInfo).port;
    const dataDir = path.join(tempDir('port'), 'data');
    try {
      const s = await start(dataDir, { port });
      expect(await exitWithin(s, 60_000)).toBe(1);
      const lines = s.stderr().trim().split('\n');
      expect(lines, s.stderr()).toHaveLength(1);
      expect(lines[0]).toContain(`cannot listen on 127.0.0.1:${port}`);
      expect(lines[0]).toContain('EADDRINUSE');
      expect(fs.existsSync(dataDir)).toBe(false); // no database, no lock, no keys
    } finally {
      await new Promise((r) => blocker.close(r));
    }
  }, 90_000);

  it('one process per embedded database: a second start is refused naming DATA_DIR and the owner pid; writes survive a restart; a crashed owner’s lock is taken over', async () => {
    const dataDir = tempDir('lock');
    const first = await start(dataDir, { npm: true });
    expect(await first.ready(), first.stdout() + first.stderr()).toBe(true);
    const owner = lockOwner(dataDir);
    expect(childrenOf(first.proc.pid!)).toContain(owner); // npm → node server/start.js (no shell, no tsx in between)

    const second = await start(dataDir);
    expect(await exitWithin(second, 60_000)).toBe(1);
    const lines = second.stderr().trim().split('\n');
    expect(lines, second.stderr()).toHaveLength(1);
    expect(lines[0]).toContain(`DATA_DIR ${dataDir} is in use by another process (pid ${owner})`);
    expect(await second.ready(1000)).toBe(false);

    // A write through the owner is there after a restart.
    const token = await adminToken(first);
    const made = await fetch(`${first.url}/api/crm/admin/invites`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ count: 1 }),
    });
    expect(made.status).toBe(200);
    const code = ((await made.json()) as { codes: string[] }).codes[0];
    first.proc.kill('SIGTERM');
    expect(await exitWithin(first, 20_000)).toBe(0);
    expect(fs.existsSync(path.join(dataDir, 'pgdata.lock'))).toBe(false);

    const again = await start(dataDir);
    expect(await again.ready(), again.stdout() + again.stderr()).toBe(true);
    expect(await invites(again, await adminToken(again))).toContain(code);

    // A crash leaves the lock behind with a dead pid: the next start takes it over.
    again.proc.kill('SIGKILL');
    await again.exited;
    expect(lockOwner(dataDir)).toBe(again.proc.pid);
    const after = await start(dataDir);
    expect(await after.ready(), after.stdout() + after.stderr()).toBe(true);
    expect(lockOwner(dataDir)).toBe(after.proc.pid);
    expect(await invites(after, await adminToken(after))).toContain(code);
    after.proc.kill('SIGTERM');
    expect(await exitWithin(after, 20_000)).toBe(0);
  }, 300_000);

  it('of two processes starting at once on one data directory, exactly one wins', async () => {
    const dataDir = await seededCopy('race');
    const [a, b] = await Promise.all([start(dataDir), start(dataDir)]);
    const [readyA, readyB] = await Promise.all([a.ready(), b.ready()]);
    expect([readyA, readyB].filter(Boolean), a.stderr() + b.stderr()).toHaveLength(1);
    const [winner, loser] = readyA ? [a, b] : [b, a];
    expect(await exitWithin(loser, 30_000)).toBe(1);
    expect(loser.stderr()).toContain(`is in use by another process (pid ${winner.proc.pid})`);
    expect(lockOwner(dataDir)).toBe(winner.proc.pid);
    winner.proc.kill('SIGTERM');
    expect(await exitWithin(winner, 20_000)).toBe(0);
  }, 300_000);

  it.skipIf(inject('dbKind') !== 'postgres')(
    'the lock is not taken on a PostgreSQL server',
    async () => {
      const db = await createServerDatabase({ empty: true });
      try {
        const dataDir = tempDir('postgres');
        // One after the other: two instances starting at once on a new server database is bootstrap work of its
        // own (they may deadlock creating the schema); here only the lock matters.
        const a = await start(dataDir, { env: { DATABASE_URL: db.url } });
        expect(await a.ready(), a.stdout() + a.stderr()).toBe(true);
        const b = await start(dataDir, { env: { DATABASE_URL: db.url } });
        expect(await b.ready(), b.stdout() + b.stderr()).toBe(true); // two instances share the server and DATA_DIR
        expect(fs.existsSync(path.join(dataDir, 'pgdata.lock'))).toBe(false);
        a.proc.kill('SIGTERM');
        b.proc.kill('SIGTERM');
        expect(await exitWithin(a, 20_000)).toBe(0);
        expect(await exitWithin(b, 20_000)).toBe(0);
      } finally {
        await db.drop();
      }
    },
    120_000,
  );

  it('the lock is not taken on an in-memory database', async () => {
    const dataDir = tempDir('memory');
    const s = await start(dataDir, { env: { DATABASE_URL: 'memory://' } });
    expect(await s.ready(), s.stdout() + s.stderr()).toBe(true);
    expect(fs.existsSync(path.join(dataDir, 'pgdata.lock'))).toBe(false);
    expect(fs.statSync(path.join(dataDir, 'keys.json')).mode & 0o777).toBe(0o600);
    s.proc.kill('SIGTERM');
    expect(await exitWithin(s, 20_000)).toBe(0);
  }, 120_000);

  it('runs under its V8 options in the process it was started as (the same pid); NODE_V8_FLAGS=off leaves Node’s defaults', async () => {
    const argv = (pid: number) => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const tuned = await start(tempDir('flags'), { env: { DATABASE_URL: 'memory://' } });
    expect(await tuned.ready(), tuned.stdout() + tuned.stderr()).toBe(true);
    expect(argv(tuned.proc.pid!)).toEqual(expect.arrayContaining(['--max-semi-space-size=8', '--liftoff-only']));
    tuned.proc.kill('SIGTERM');
    expect(await exitWithin(tuned, 20_000)).toBe(0);

    const plain = await start(tempDir('flags'), { env: { DATABASE_URL: 'memory://', NODE_V8_FLAGS: 'off' } });
    expect(await plain.ready(), plain.stdout() + plain.stderr()).toBe(true);
    expect(argv(plain.proc.pid!).filter((a) => a.startsWith('--'))).toEqual([]);
    plain.proc.kill('SIGTERM');
    expect(await exitWithin(plain, 20_000)).toBe(0);
  }, 120_000);
});

describe('shutdown of npm start', () => {
  const llm = startLlmStandIn();
  /** The model answers when `release()` is called (a request in flight for as long as a test wants). */
  let release: () => void = () => {};
  afterAll(async () => {
    release();
    await (await llm).close();
  });

  async function startWithModel(dataDir: string, shutdownMs: number, group = false) {
    const s = await llm;
    const server = await start(dataDir, {
      npm: true,
      group,
      env: {
        LLM_PROVIDER: 'anthropic',
        LLM_BASE_URL: s.anthropicUrl,
        PLATFORM_LLM_KEY: 'sk-platform-shutdown-test',
        SHUTDOWN_TIMEOUT_MS: String(shutdownMs),
      },
    });
    expect(await server.ready(), server.stdout() + server.stderr()).toBe(true);
    const token = await adminToken(server);
    const tree = [server.proc.pid!, ...childrenOf(server.proc.pid!)];
    expect(tree.length).toBeGreaterThan(1);
    return { server, token, tree };
  }

  /**
   * Ask the help assistant and wait until the request is waiting on the model.
   * @returns `answer`, which settles when the answer arrives (or the connection breaks).
   */
  async function askInFlight(server: Server, token: string) {
    const s = await llm;
    const before = s.modelCalls().length;
    const gate = new Promise<void>((r) => (release = r));
    s.respond(async (): Promise<ScriptedReply> => {
      await gate;
      return { content: [{ type: 'text', text: 'Answered after the signal.' }] };
    });
    const answer = fetch(`${server.url}/api/crm/help/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'How do I create a project?' }),
    }).then(
      async (res) => ({ status: res.status, body: (await res.json()) as { reply?: string } }),
      (err: Error) => ({ status: 0, body: { reply: err.message } }),
    );
    const deadline = Date.now() + 30_000;
    while (s.modelCalls().length === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(s.modelCalls().length).toBeGreaterThan(before); // the request is now waiting on the model
    return { answer };
  }

  const gone = async (tree: number[], port: number) => {
    for (const pid of tree) expect(alive(pid), `pid ${pid}`).toBe(false);
    expect(await portFree(port)).toBe(true);
  };

  it('SIGTERM finishes the in-flight request, then the port is free and the process tree gone (exit 0)', async () => {
    const dataDir = await seededCopy('term');
    const { server, token, tree } = await startWithModel(dataDir, 15_000);
    const { answer } = await askInFlight(server, token);
    server.proc.kill('SIGTERM'); // to npm, as a process manager would
    await new Promise((r) => setTimeout(r, 500));
    expect(server.proc.exitCode).toBe(null); // still finishing the request
    release();
    const res = await answer;
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.reply).toContain('Answered after the signal.');
    expect(await exitWithin(server, 15_000), server.stdout() + server.stderr()).toBe(0);
    await gone(tree, server.port);
    expect(fs.existsSync(path.join(dataDir, 'pgdata.lock'))).toBe(false);
  }, 300_000);

  it('Ctrl-C (SIGINT to the process group: npm forwards a second copy) is one graceful stop, not two', async () => {
    const dataDir = await seededCopy('ctrl-c');
    const { server, token, tree } = await startWithModel(dataDir, 15_000, true);
    const { answer } = await askInFlight(server, token);
    process.kill(-server.proc.pid!, 'SIGINT');
    await new Promise((r) => setTimeout(r, 800));
    expect(server.proc.exitCode).toBe(null); // neither copy made it exit at once
    release();
    const res = await answer;
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await exitWithin(server, 15_000), server.stdout() + server.stderr()).toBe(0);
    await gone(tree, server.port);
  }, 300_000);

  it('a request that does not finish: the process exits at SHUTDOWN_TIMEOUT_MS (code 1)', async () => {
    const dataDir = await seededCopy('bound');
    const { server, token, tree } = await startWithModel(dataDir, 1500);
    await askInFlight(server, token);
    const asked = Date.now();
    server.proc.kill('SIGTERM');
    expect(await exitWithin(server, 15_000), server.stdout() + server.stderr()).toBe(1);
    const took = Date.now() - asked;
    expect(took).toBeGreaterThanOrEqual(1400);
    expect(took).toBeLessThan(10_000);
    await gone(tree, server.port);
    expect(fs.existsSync(path.join(dataDir, 'pgdata.lock'))).toBe(false);
    release();
  }, 300_000);

  it('a second signal exits at once (code 1)', async () => {
    const dataDir = await seededCopy('twice');
    const { server, token, tree } = await startWithModel(dataDir, 60_000);
    await askInFlight(server, token);
    const node = tree[1];
    server.proc.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1500)); // past the window in which a repeat counts as the same signal
    expect(server.proc.exitCode).toBe(null);
    const asked = Date.now();
    process.kill(node, 'SIGTERM'); // the second one straight to the server, as a second Ctrl-C would reach it
    expect(await exitWithin(server, 15_000), server.stdout() + server.stderr()).toBe(1);
    expect(Date.now() - asked).toBeLessThan(5_000);
    await gone(tree, server.port);
    release();
  }, 300_000);
});
