/**
 * Test-only harness (the crash test and bench/crash-recovery.ts): the service as a real process
 * (`node server/start.js`, what `npm start` runs) in its own process group, its log lines appended to a file
 * as they are written, killed with SIGKILL or stopped with SIGTERM, and driven over HTTP as an operator would:
 * sign in as the bootstrap admin, give the account an LLM key, make a project with workers, send messages and
 * read the runs.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from './net.ts';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const ADMIN = { email: 'chaos-admin@example.com', password: 'chaos admin passphrase 1' };

/** A started service process. */
export interface ServiceProcess {
  proc: ChildProcess;
  pid: number;
  url: string;
  port: number;
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL the process group (as `kill -9 -<pgid>`) and wait until it is gone. */
  kill9(): Promise<void>;
  /** SIGTERM and wait for the exit. @returns the exit code */
  term(timeoutMs?: number): Promise<number | null>;
}

/**
 * Start the service on `dataDir` and wait for `GET /readyz` 200. Its stdout and stderr are appended to
 * `logFile` by the kernel (the process writes to the file itself), so what it wrote before a kill is there.
 * @param env extra environment (DATABASE_URL, LLM_BASE_URL, …); `port` defaults to a free one.
 */
export async function startService(
  dataDir: string,
  logFile: string,
  env: Record<string, string> = {},
  opts: { port?: number; timeoutMs?: number } = {},
): Promise<ServiceProcess> {
  const port = opts.port ?? (await freePort());
  const fd = fs.openSync(logFile, 'a');
  const proc = spawn(process.execPath, ['server/start.js'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      BREACH_CHECK_URL: 'off',
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      ...env,
    },
    stdio: ['ignore', fd, fd],
    detached: true,
  });
  fs.closeSync(fd);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const url = `http://127.0.0.1:${port}`;
  const s: ServiceProcess = {
    proc,
    pid: proc.pid!,
    url,
    port,
    exited,
    async kill9() {
      if (proc.exitCode === null && proc.signalCode === null) {
        try {
          process.kill(-proc.pid!, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
      await exited;
    },
    async term(timeoutMs = 20_000) {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      const r = await Promise.race([exited, new Promise<null>((res) => setTimeout(() => res(null), timeoutMs))]);
      if (!r) {
        await s.kill9();
        return null;
      }
      return r.code;
    },
  };
  const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
  let done = false;
  void exited.then(() => (done = true));
  for (;;) {
    if (done) throw new Error(`the service exited at start: ${tail(logFile)}`);
    if (Date.now() > deadline) {
      await s.kill9();
      throw new Error(`the service was not ready in time: ${tail(logFile)}`);
    }
    try {
      const res = await fetch(`${url}/readyz`);
      await res.arrayBuffer();
      if (res.status === 200) return s;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The last 2,000 characters of a file (for error messages). */
export const tail = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').slice(-2000) : '');

/** The JSON log lines of a log file (other lines skipped). */
export function logLines(file: string): Array<Record<string, any>> {
  const out: Array<Record<string, any>> = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line));
    } catch {
      /* a line cut by a kill */
    }
  }
  return out;
}

/** HTTP against a started service (or any base URL), JSON in and out. */
export function client(base: () => string) {
  let token = '';
  const call = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(`${base()}${p}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  return {
    call,
    /** Sign in as the bootstrap admin. */
    async login() {
      const r = await call('POST', '/api/auth/login', ADMIN);
      if (r.status !== 200) throw new Error(`login: ${r.status} ${JSON.stringify(r.body)}`);
      token = r.body.token;
    },
    /**
     * Give the admin an LLM key, create project `name` with `workers` workers (no tools unless given).
     * @returns the worker ids
     */
    async setup(name: string, workers: number, tools: string[] = []): Promise<number[]> {
      const key = await call('PUT', '/api/crm/account/settings', { llm_key: 'sk-chaos-test-key' });
      if (key.status !== 200) throw new Error(`settings: ${key.status} ${JSON.stringify(key.body)}`);
      const p = await call('POST', '/api/crm/projects/create', { displayName: name, projectName: name });
      if (p.status !== 201 && p.status !== 200) throw new Error(`project: ${p.status} ${JSON.stringify(p.body)}`);
      const ids: number[] = [];
      for (let i = 0; i < workers; i++) {
        const w = await call('POST', `/api/crm/projects/${name}/workers`, {
          label: `W${i + 1}`,
          model: 'claude-sonnet-4-6',
          max_turns: 10,
          tools: tools.length ? tools : ['read_wiki_page'],
        });
        if (w.status !== 201 && w.status !== 200) throw new Error(`worker: ${w.status} ${JSON.stringify(w.body)}`);
        ids.push(w.body.id);
      }
      return ids;
    },
    /** Send `text` to one worker. @returns the run ids (empty when the message was refused) and the status. */
    async message(project: string, workerId: number, text: string) {
      const r = await call('POST', `/api/crm/projects/${project}/message`, { worker_id: workerId, text });
      return { status: r.status, runIds: (r.body?.run_ids ?? []) as number[], body: r.body };
    },
    /** Every run of the project (newest first). */
    async runs(project: string): Promise<Array<Record<string, any>>> {
      const out: Array<Record<string, any>> = [];
      let before: number | null = null;
      for (;;) {
        const r = await call('GET', `/api/crm/projects/${project}/runs?limit=200${before ? `&before=${before}` : ''}`);
        if (r.status !== 200) throw new Error(`runs: ${r.status} ${JSON.stringify(r.body)}`);
        out.push(...r.body.runs);
        before = r.body.next_before;
        if (!before) return out;
      }
    },
  };
}
