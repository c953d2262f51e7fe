/**
 * End to end: the real `arc` binary (child processes) against the real service (`node server/start.js`) on the
 * embedded database, or on a new database of the PostgreSQL test server when TEST_DATABASE_URL is set: login
 * through the device link, init, issue take/log/close with the session summary, transcript upload, and the
 * commit-message hook in a real git repository.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from '../../server/test/net.ts';
import { createServerDatabase } from '../../server/test/helpers.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const ARC = path.join(ROOT, 'cli/bin/arc.js');
const ADMIN = { email: 'admin@example.com', password: 'admin-password-123' };
const USER = { email: 'dev@example.com', password: 'dev-password-123456' };
const dirs: string[] = [];
let server: ChildProcess | undefined;
let url = '';
let userToken = '';
let configDir = '';
let work = '';
/** On PostgreSQL: the empty database made for this file (the service migrates it; dropped at the end). */
let serverDb: Awaited<ReturnType<typeof createServerDatabase>> | undefined;

const tempDir = (prefix: string) => {
  const d = fs.mkdtempSync(path.join(path.resolve(ROOT, '.tmp'), `${prefix}-`));
  dirs.push(d);
  return d;
};

async function call(method: string, p: string, body?: unknown, token = userToken) {
  const res = await fetch(`${url}${p}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as any };
}

/** Run arc; resolves with its exit code and output. `onStdout` sees the output as it comes. */
function arc(
  args: string[],
  opts: { env?: Record<string, string>; onStdout?: (text: string) => void } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [ARC, ...args], {
      cwd: work,
      env: {
        PATH: process.env.PATH,
        HOME: work,
        ARC_CONFIG_DIR: configDir,
        ARC_SERVER: url,
        ARC_NO_BROWSER: '1',
        ...opts.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => {
      stdout += d;
      opts.onStdout?.(stdout);
    });
    p.stderr.on('data', (d) => (stderr += d));
    p.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const git = (args: string[], env: Record<string, string> = {}) =>
  execFileSync('git', args, {
    cwd: work,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH,
      HOME: work,
      GIT_AUTHOR_NAME: 'Dev',
      GIT_AUTHOR_EMAIL: 'dev@example.com',
      GIT_COMMITTER_NAME: 'Dev',
      GIT_COMMITTER_EMAIL: 'dev@example.com',
      ...env,
    },
  });
/** Commit an empty change with this message: true when the hook let it through. */
const commit = (message: string, env: Record<string, string> = {}) => {
  try {
    git(['commit', '--allow-empty', '-q', '-m', message], env);
    return true;
  } catch {
    return false;
  }
};

beforeAll(async () => {
  fs.mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
  const dataDir = tempDir('arc-data');
  configDir = path.join(tempDir('arc-config'), 'arc');
  work = tempDir('arc-work');
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  if (inject('dbKind') === 'postgres') serverDb = await createServerDatabase({ empty: true });
  server = spawn(process.execPath, ['server/start.js'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATA_DIR: dataDir,
      ...(serverDb ? { DATABASE_URL: serverDb.url } : {}),
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      BREACH_CHECK_URL: 'off',
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      CLI_LINK_POLL_MS: '200',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const deadline = Date.now() + 120_000;
  for (;;) {
    const ok = await fetch(`${url}/readyz`)
      .then((r) => r.status === 200)
      .catch(() => false);
    if (ok) break;
    if (Date.now() > deadline || server.exitCode !== null) throw new Error('the service did not start');
    await new Promise((r) => setTimeout(r, 200));
  }
  const admin = (await call('POST', '/api/auth/login', ADMIN, '')).body.token;
  expect((await call('POST', '/api/crm/admin/users', { ...USER, email_verified: true }, admin)).status).toBe(201);
  userToken = (await call('POST', '/api/auth/login', USER, '')).body.token;
  const created = await call('POST', '/api/crm/projects/create-with-team', {
    project: { displayName: 'Shop', projectName: 'shop' },
    workers: [{ label: 'Coder' }],
  });
  expect(created.status).toBeLessThan(300);
  expect((await call('POST', '/api/crm/projects/shop/issues', { title: 'Fix the login' })).status).toBe(201);
}, 180_000);

afterAll(async () => {
  if (server && server.exitCode === null && server.signalCode === null) {
    const exited = new Promise((r) => server!.once('exit', r));
    server.kill('SIGKILL');
    await exited;
  }
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  await serverDb?.drop();
});

describe('arc against the running service', () => {
  it('login links the device through the code and stores the token with mode 0600', async () => {
    let confirmed: Promise<unknown> | undefined;
    const r = await arc(['login'], {
      onStdout: (out) => {
        const m = /confirm the code ([A-Z0-9]{4}-[A-Z0-9]{4})/.exec(out);
        if (m && !confirmed) {
          expect(out).toContain(`${url}/cli/link?code=${m[1]}`);
          confirmed = call('POST', '/api/crm/cli/link/confirm', { code: m[1] });
        }
      },
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Logged in as ${USER.email}`);
    expect(((await confirmed) as any).status).toBe(200);
    const file = path.join(configDir, 'auth.json');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).server).toBe(url);
    // The login checked the device in.
    const status = await call('GET', '/api/crm/onboarding/cli-status');
    expect(status.body.installed).toBe(true);
    expect((await call('GET', '/api/crm/cli/devices')).body.devices[0]).toMatchObject({ arc_version: '1.0.16' });
  });

  it('init writes the context, binds the directory and the issues file; listings have --json', async () => {
    const r = await arc(['init', 'shop']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(fs.readFileSync(path.join(work, '.arc/context.md'), 'utf8')).toContain('Coder');
    expect(JSON.parse(fs.readFileSync(path.join(work, '.arc/project.json'), 'utf8'))).toEqual({
      project: 'shop',
      worker: 'Coder',
    });
    const list = await arc(['issue', 'list', '--json']);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual([
      expect.objectContaining({ id: 1, title: 'Fix the login', status: 'open' }),
    ]);
    const issues = JSON.parse(fs.readFileSync(path.join(work, '.crm/issues.json'), 'utf8'));
    expect(issues.issues).toEqual([expect.objectContaining({ id: 1, status: 'open' })]);
  });

  it('issue take, log and close: assignee, statuses, activity and the session summary', async () => {
    const take = await arc(['issue', 'take', '1']);
    expect(take.code).toBe(0);
    let issue = (await call('GET', '/api/crm/projects/shop/issues/1')).body;
    expect(issue).toMatchObject({ status: 'in_progress', assignee: 'Coder' });
    expect(fs.existsSync(path.join(work, '.arc/session.json'))).toBe(true);
    expect((await arc(['issue', 'log', '1', 'found', 'the', 'bug'])).code).toBe(0);
    issue = (await call('GET', '/api/crm/projects/shop/issues/1')).body;
    expect(issue.activity.map((a: any) => a.message)).toEqual(expect.arrayContaining(['found the bug']));

    git(['init', '-q']);
    const hook = await arc(['hook', 'install']);
    expect(hook.code).toBe(0);
    expect(commit('Work on #1')).toBe(true);
    expect(commit('Fix #99')).toBe(false);

    const jsonl = path.join(work, 'session.jsonl');
    fs.writeFileSync(
      jsonl,
      [
        JSON.stringify({ type: 'user', message: { role: 'user', content: 'Please   fix the login' } }),
        JSON.stringify({
          type: 'assistant',
          message: { role: 'assistant', content: [{ type: 'text', text: 'Fixed.' }] },
        }),
      ].join('\n'),
    );
    const close = await arc(['issue', 'close', '1', '-m', 'done', '--transcript', jsonl]);
    expect(close.stderr).toBe('');
    expect(close.code).toBe(0);
    expect((await call('GET', '/api/crm/projects/shop/issues/1')).body.status).toBe('closed');
    expect(fs.existsSync(path.join(work, '.arc/session.json'))).toBe(false);
    const sessions = (await call('GET', '/api/crm/projects/shop/cli-sessions')).body;
    expect(sessions.events[0].metadata).toMatchObject({
      issue_id: 1,
      first_prompt: 'Please fix the login',
      message_count: 2,
    });
    expect(sessions.transcriptSessionIds).toEqual([sessions.events[0].metadata.session_id]);

    // The hook: a closed issue is refused; without the interpreter or the issues file the commit goes through.
    expect(commit('More on #1')).toBe(false);
    expect(commit('More on #1', { ARC_HOOK_NODE: '/nonexistent/node' })).toBe(true);
    fs.rmSync(path.join(work, '.crm/issues.json'));
    expect(commit('Again #1')).toBe(true);
  });

  it('transcript upload and list; errors have exit codes', async () => {
    const file = path.join(work, 'abc-123.jsonl');
    fs.writeFileSync(file, `${JSON.stringify({ role: 'user', content: 'hello' })}\n`);
    const up = await arc(['transcript', 'upload', file, '--json']);
    expect(up.code).toBe(0);
    expect(JSON.parse(up.stdout)).toMatchObject({ session_id: 'abc-123', message_count: 1 });
    const list = await arc(['transcript', 'list', '--json']);
    expect(JSON.parse(list.stdout).map((t: any) => t.session_id)).toContain('abc-123');
    const dl = await call('GET', '/api/cli/transcript/shop/abc-123');
    expect(dl.body.jsonl).toBe(fs.readFileSync(file, 'utf8'));

    // arc run: the wrapped command's exit sends the session summary (its exit code passes through).
    const before = (await call('GET', '/api/crm/projects/shop/cli-sessions')).body.events.length;
    const run = await arc(['run', '--', process.execPath, '-e', 'process.exit(7)']);
    expect(run.code).toBe(7);
    expect(run.stderr).toContain('session summary sent');
    expect((await call('GET', '/api/crm/projects/shop/cli-sessions')).body.events.length).toBe(before + 1);

    const missing = await arc(['issue', 'take', '42']);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toMatch(/^arc: /);
    expect((await arc(['issue', 'take', 'abc'])).code).toBe(2);
    expect((await arc(['--server', 'http://127.0.0.1:1', 'issue', 'list'])).code).toBe(5);
    expect((await arc(['logout'])).code).toBe(0);
    const after = await arc(['issue', 'list']);
    expect(after.code).toBe(3);
    expect(after.stderr).toContain('arc login');
  });
});
