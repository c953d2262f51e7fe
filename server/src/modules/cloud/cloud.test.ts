/**
 * The cloud container through the HTTP API on the `process` runtime (bubblewrap sandboxes on this host):
 * provision, the terminal socket, the log stream, the lifecycle pause and the resume by a message, the
 * owner check of the socket and the stream, deprovision, the waitlist.
 */
import http from 'node:http';
import fs from 'node:fs';
import { sql } from 'kysely';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, buildTestApp, createProject, createUser, type TestApp } from '../../../test/helpers.ts';
import { createWorker } from '../../../test/runtime-fixtures.ts';
import { containerProcesses, isExiting, isStopped } from '../../providers/containers/process-runtime.ts';
import type { ToolContext } from '../runtime/tools.ts';
import { createShellPort } from './cloud.port.ts';

let t: TestApp;
let base: string;
let sandboxes = true;
let skipReason = '';
const provisioned: number[] = [];
/** Clients a failed test may leave open (closed before the app). */
const clients: { close(): void }[] = [];

beforeAll(async () => {
  t = await buildTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const addr = t.app.server.address() as { port: number };
  base = `http://127.0.0.1:${addr.port}`;
  try {
    await t.deps.containers.check();
  } catch (err) {
    sandboxes = false;
    skipReason = `${(err as Error).message} ${(err as { detail?: string }).detail ?? ''}`;
    console.log(`cloud sandbox tests skipped: ${skipReason}`);
  }
});
afterAll(async () => {
  for (const c of clients) c.close();
  for (const id of provisioned) await t.deps.containers.remove('', id).catch(() => {});
  await t?.close();
});

/** Open the terminal socket; collects every text frame. */
function openTerminal(userPath: string, token: string) {
  const ws = new WebSocket(`${base.replace('http', 'ws')}/api/crm/ws/cloud/${userPath}/terminal?token=${token}`);
  clients.push({ close: () => ws.terminate() });
  let out = '';
  ws.on('message', (d) => {
    out += d.toString();
  });
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (req, res) => {
      req.destroy();
      reject(new Error(`refused ${res.statusCode}`));
    });
    ws.once('error', reject);
  });
  return {
    ws,
    opened,
    output: () => out,
    async waitFor(re: RegExp, ms = 15_000) {
      const until = Date.now() + ms;
      while (Date.now() < until) {
        if (re.test(out)) return out;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`terminal output never matched ${re}: ${JSON.stringify(out.slice(-500))}`);
    },
  };
}

/** Read an SSE stream over a real socket; collects `data:` payloads. */
function openLogs(userPath: string, token: string) {
  const events: any[] = [];
  let status = 0;
  let body = '';
  const req = http.get(`${base}/api/sse/cloud/${userPath}/logs?token=${token}`, { agent: false });
  clients.push({ close: () => req.destroy() });
  const ended = new Promise<void>((resolve) => {
    req.on('response', (res) => {
      status = res.statusCode ?? 0;
      res.setEncoding('utf8');
      let buf = '';
      res.on('data', (c: string) => {
        body += c;
        buf += c;
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          for (const l of block.split('\n')) if (l.startsWith('data: ')) events.push(JSON.parse(l.slice(6)));
        }
      });
      res.on('end', () => resolve());
      res.on('close', () => resolve());
    });
    req.on('error', () => resolve());
  });
  return {
    events,
    ended,
    status: () => status,
    body: () => body,
    close: () => req.destroy(),
    async waitFor(pred: (e: any) => boolean, ms = 15_000) {
      const until = Date.now() + ms;
      while (Date.now() < until) {
        if (events.some(pred)) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`log stream never had the event: ${JSON.stringify(events.slice(-10))}`);
    },
  };
}

describe('cloud plan and status', () => {
  it('answers none without a container and 402 without the cloud plan; nothing is stored', async () => {
    const u = await createUser(t);
    expect((await api(t.app, 'GET', '/api/crm/cloud/status', { token: u.token })).body).toEqual({ status: 'none' });
    const r = await api(t.app, 'POST', '/api/crm/cloud/provision', { token: u.token });
    expect(r.status).toBe(402);
    expect(r.body.error).toBe('cloud_plan_required');
    expect((await api(t.app, 'GET', '/api/crm/cloud/status', { token: u.token })).body).toEqual({ status: 'none' });
    expect((await api(t.app, 'POST', '/api/crm/cloud/deprovision', { token: u.token })).status).toBe(404);
    expect((await api(t.app, 'POST', '/api/crm/cloud/ssh-keygen', { token: u.token })).body.error).toBe(
      'container_not_found',
    );
  });

  it('answers 503 container_runtime_unavailable when the runtime cannot run containers', async () => {
    const off = await buildTestApp({ env: { CONTAINER_RUNTIME: 'none' } });
    try {
      const u = await createUser(off, { plan: 'cloud' });
      const r = await api(off.app, 'POST', '/api/crm/cloud/provision', { token: u.token });
      expect(r.status).toBe(503);
      expect(r.body.error).toBe('container_runtime_unavailable');
      expect((await api(off.app, 'GET', '/api/crm/cloud/status', { token: u.token })).body).toEqual({
        status: 'none',
      });
    } finally {
      await off.close();
    }
  });
});

describe('waitlist', () => {
  it('joins idempotently with a position, refuses cloud users, lists for admins, invites to the cloud plan', async () => {
    const a = await createUser(t);
    const b = await createUser(t);
    const admin = await createUser(t, { role: 'admin' });
    const cloudUser = await createUser(t, { plan: 'cloud' });

    expect((await api(t.app, 'GET', '/api/crm/cloud/waitlist/status', { token: a.token })).body).toEqual({
      status: 'not_joined',
    });
    const j1 = await api(t.app, 'POST', '/api/crm/cloud/waitlist', { token: a.token, body: { note: 'builds' } });
    expect(j1.status).toBe(200);
    expect(j1.body).toMatchObject({ status: 'waiting', position: expect.any(Number) });
    const again = await api(t.app, 'POST', '/api/crm/cloud/waitlist', { token: a.token });
    expect(again.body.position).toBe(j1.body.position);
    expect(again.body.joined_at).toBe(j1.body.joined_at);
    const j2 = await api(t.app, 'POST', '/api/crm/cloud/waitlist', { token: b.token });
    expect(j2.body.position).toBe(j1.body.position + 1);

    const refused = await api(t.app, 'POST', '/api/crm/cloud/waitlist', { token: cloudUser.token });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe('already_on_cloud');

    expect((await api(t.app, 'GET', '/api/crm/cloud/waitlist', { token: a.token })).status).toBe(403);
    expect(
      (await api(t.app, 'POST', '/api/crm/cloud/waitlist/invite', { token: a.token, body: { user_id: b.id } })).status,
    ).toBe(403);
    const list = await api(t.app, 'GET', '/api/crm/cloud/waitlist', { token: admin.token });
    expect(list.status).toBe(200);
    expect(list.body.stats.waiting).toBeGreaterThanOrEqual(2);
    expect(list.body.list.map((e: any) => e.user_id)).toEqual(expect.arrayContaining([a.id, b.id]));

    const inv = await api(t.app, 'POST', '/api/crm/cloud/waitlist/invite', {
      token: admin.token,
      body: { user_id: b.id },
    });
    expect(inv.body).toEqual({ ok: true, user_id: b.id, position: j2.body.position });
    const st = await api(t.app, 'GET', '/api/crm/cloud/waitlist/status', { token: b.token });
    expect(st.body.status).toBe('invited');
    expect(st.body.invited_at).toEqual(expect.any(String));
    expect((await api(t.app, 'GET', '/api/auth/me', { token: b.token })).body.plan).toBe('cloud');
    const stats = await t.services.cloud.waitlistStats();
    expect(stats.invited).toBeGreaterThanOrEqual(1);

    const missing = await api(t.app, 'POST', '/api/crm/cloud/waitlist/invite', {
      token: admin.token,
      body: { user_id: 2_000_000_000 },
    });
    expect(missing.status).toBe(404);
  });
});

describe('the container on the process runtime', () => {
  it('provisions, runs the terminal, streams the log, pauses when idle, resumes on a message, deprovisions', async (ctx) => {
    if (!sandboxes) ctx.skip();
    const u = await createUser(t, { plan: 'cloud' });
    const other = await createUser(t, { plan: 'cloud' });
    provisioned.push(u.id);

    const p1 = await api(t.app, 'POST', '/api/crm/cloud/provision', { token: u.token });
    expect(p1.status).toBe(200);
    expect(p1.body).toMatchObject({ status: 'ready', agent_authed: false, codehost_authed: false });
    const p2 = await api(t.app, 'POST', '/api/crm/cloud/provision', { token: u.token });
    expect(p2.body.container_id).toBe(p1.body.container_id);
    const st = await api(t.app, 'GET', '/api/crm/cloud/status', { token: u.token });
    expect(st.body).toMatchObject({ status: 'ready', docker_running: true, container_id: p1.body.container_id });

    // A waitlist join conflicts while a container exists (here after a downgrade to free).
    await t.db.updateTable('users').set({ plan: 'free' }).where('id', '=', u.id).execute();
    t.deps.userCache.invalidate(u.id);
    const wl = await api(t.app, 'POST', '/api/crm/cloud/waitlist', { token: u.token });
    expect(wl.status).toBe(409);
    expect(wl.body.error).toBe('container_exists');
    await t.db.updateTable('users').set({ plan: 'cloud' }).where('id', '=', u.id).execute();
    t.deps.userCache.invalidate(u.id);

    // Another user's socket and stream are refused before anything opens.
    const refused = openTerminal(String(u.id), other.token);
    await expect(refused.opened).rejects.toThrow(/refused 403/);
    const refused2 = openTerminal(String(other.id), u.token);
    await expect(refused2.opened).rejects.toThrow(/refused 403/);
    const noContainer = openTerminal(String(other.id), other.token);
    await expect(noContainer.opened).rejects.toThrow(/refused 404/);
    const badLogs = openLogs(String(u.id), other.token);
    await badLogs.ended;
    expect(badLogs.status()).toBe(403);
    expect(JSON.parse(badLogs.body()).error).toBe('container_owner_mismatch');
    const anon = openTerminal(String(u.id), 'not-a-token');
    await expect(anon.opened).rejects.toThrow(/refused 401/);

    // The log stream, then the terminal.
    const logs = openLogs(String(u.id), u.token);
    const term = openTerminal(String(u.id), u.token);
    await term.opened;
    term.ws.send('echo hi\n');
    await term.waitFor(/[\r\n]hi\r?\n/);
    // Input right after a resize waits for it: the command sees the new size.
    term.ws.send(JSON.stringify({ type: 'resize', cols: 123, rows: 45 }));
    term.ws.send(JSON.stringify({ type: 'input', data: 'stty size\n' }));
    await term.waitFor(/45 123/);
    await logs.waitFor((e) => e.line === 'hi');
    expect(logs.status()).toBe(200);

    // The sandbox: its own home, no view of the service's files, no service environment, no password hashes.
    term.ws.send(`ls ${t.dataDir} >/dev/null 2>&1 || echo NO-DATA-DIR; env | grep -c CRM_ || echo NO-ENV\n`);
    await term.waitFor(/NO-DATA-DIR/);
    await term.waitFor(/NO-ENV/);
    term.ws.send('cat /etc/shadow >/dev/null 2>&1 || echo NO-SHADOW; echo "home=$HOME"; id -u\n');
    await term.waitFor(/NO-SHADOW/);
    await term.waitFor(/home=\/home\/user/);
    term.ws.close();

    // A new stream starts from the stored tail (served from the database, as any instance would).
    const later = openLogs(String(u.id), u.token);
    await later.waitFor((e) => e.line === 'hi');
    later.close();

    // The lifecycle: idle 31 minutes → paused (the processes are stopped).
    await t.db
      .updateTable('cloud_containers')
      .set({ last_active: sql<Date>`now() - interval '31 minutes'` })
      .where('user_id', '=', u.id)
      .execute();
    await t.db.deleteFrom('cloud_leases').execute();
    const [s1, s2] = await Promise.all([t.services.cloud.lifecycleSweep(), t.services.cloud.lifecycleSweep()]);
    expect([s1, s2].filter((s) => s === null)).toHaveLength(1);
    expect((s1 ?? s2)!.paused).toBeGreaterThanOrEqual(1);
    const procs = containerProcesses(u.id, t.dataDir);
    expect(procs.length).toBeGreaterThan(0);
    expect(procs.filter((p) => !isExiting(p)).every(isStopped)).toBe(true);
    expect((await api(t.app, 'GET', '/api/crm/cloud/status', { token: u.token })).body.status).toBe('paused');
    expect((await t.services.cloud.fleetStats()).paused).toBeGreaterThanOrEqual(1);

    // A chat message to one of the user's projects resumes it first (before any other check: here the
    // message itself is then refused for want of an LLM key).
    const project = await createProject(t, u.id);
    const worker = await createWorker(t, project.id);
    const msg = await api(t.app, 'POST', `/api/crm/projects/${project.name}/message`, {
      token: u.token,
      body: { worker_id: worker.id, text: 'hello' },
    });
    expect(msg.body.error).toBe('llm_key_required');
    expect(containerProcesses(u.id, t.dataDir).some(isStopped)).toBe(false);
    expect((await api(t.app, 'GET', '/api/crm/cloud/status', { token: u.token })).body.status).toBe('ready');

    // A terminal upgrade resumes a paused container too.
    await t.services.cloud.pauseUser(u.id);
    expect((await api(t.app, 'GET', '/api/crm/cloud/status', { token: u.token })).body.status).toBe('paused');
    const term2 = openTerminal(String(u.id), u.token);
    await term2.opened;
    term2.ws.send('echo again\n');
    await term2.waitFor(/[\r\n]again\r?\n/);
    term2.ws.close();

    // Deprovision: processes and home gone, status deleted, the stream ends with closed.
    const follow = openLogs(String(u.id), u.token);
    await follow.waitFor((e) => e.line === 'again');
    const d = await api(t.app, 'POST', '/api/crm/cloud/deprovision', { token: u.token });
    expect(d.body).toEqual({ ok: true, container_id: p1.body.container_id });
    await follow.waitFor((e) => e.closed === true);
    await follow.ended;
    expect(containerProcesses(u.id, t.dataDir)).toHaveLength(0);
    expect(fs.existsSync(`${t.dataDir}/cloud/u${u.id}`)).toBe(false);
    expect((await api(t.app, 'GET', '/api/crm/cloud/status', { token: u.token })).body.status).toBe('deleted');
    expect((await api(t.app, 'POST', '/api/crm/cloud/deprovision', { token: u.token })).status).toBe(404);
  }, 60_000);

  it('closes an idle terminal socket', async (ctx) => {
    if (!sandboxes) ctx.skip();
    const quick = await buildTestApp({ env: { CLOUD_TERMINAL_IDLE_MS: '700' } });
    await quick.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (quick.app.server.address() as { port: number }).port;
    const u = await createUser(quick, { plan: 'cloud' });
    try {
      expect((await api(quick.app, 'POST', '/api/crm/cloud/provision', { token: u.token })).status).toBe(200);
      const ws = new WebSocket(`ws://127.0.0.1:${port}/api/crm/ws/cloud/${u.id}/terminal?token=${u.token}`);
      const closed = new Promise<{ code: number; reason: string }>((resolve) =>
        ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
      );
      const c = await closed;
      expect(c.reason).toBe('idle_timeout');
    } finally {
      await quick.deps.containers.remove('', u.id);
      await quick.close();
    }
  }, 30_000);

  it('generates one ssh key, runs the verify commands inside the container and never on the host', async (ctx) => {
    if (!sandboxes) ctx.skip();
    const u = await createUser(t, { plan: 'cloud' });
    provisioned.push(u.id);
    expect((await api(t.app, 'POST', '/api/crm/cloud/provision', { token: u.token })).status).toBe(200);
    const k1 = await api(t.app, 'POST', '/api/crm/cloud/ssh-keygen', { token: u.token });
    expect(k1.status).toBe(200);
    expect(k1.body.public_key).toMatch(/^ssh-ed25519 [A-Za-z0-9+/=]+ /);
    const k2 = await api(t.app, 'POST', '/api/crm/cloud/ssh-keygen', { token: u.token });
    expect(k2.body.public_key).toBe(k1.body.public_key);
    expect(JSON.stringify(k1.body)).not.toMatch(/PRIVATE KEY/);
    // The private key is in the container's home with mode 0600.
    const r = await t.services.cloud.runCommand(u.id, [
      'sh',
      '-c',
      'stat -c %a .ssh/id_ed25519; head -1 .ssh/id_ed25519',
    ]);
    expect(r!.output).toMatch(/600/);
    expect(r!.output).toMatch(/BEGIN OPENSSH PRIVATE KEY/);

    // No agent CLI in this sandbox: an honest failure, the flag stays false.
    const cv = await api(t.app, 'POST', '/api/crm/cloud/claude-verify', { token: u.token });
    expect(cv.status).toBe(200);
    expect(cv.body.ok).toBe(false);
    // The sandbox has no network: the code host cannot be reached.
    const sv = await api(t.app, 'POST', '/api/crm/cloud/ssh-verify', { token: u.token });
    expect(sv.status).toBe(200);
    expect(sv.body.ok).toBe(false);
    const st = await api(t.app, 'GET', '/api/crm/cloud/status', { token: u.token });
    expect(st.body).toMatchObject({ agent_authed: false, codehost_authed: false });

    // A command that names the host's files sees the sandbox's, not the host's.
    const host = await t.services.cloud.runCommand(u.id, [
      'sh',
      '-c',
      `test -e ${t.dataDir} && echo VISIBLE || echo HIDDEN`,
    ]);
    expect(host!.output.trim()).toBe('HIDDEN');
    // Without a container a command is not run anywhere.
    const none = await createUser(t);
    expect(await t.services.cloud.runCommand(none.id, ['true'])).toBeNull();
  }, 60_000);

  it("runs the agent's run_command tool inside the owner's container, resuming it; refuses without one", async (ctx) => {
    if (!sandboxes) ctx.skip();
    const tool = t.deps.agentTools.get('run_command')!;
    const u = await createUser(t, { plan: 'cloud' });
    const toolCtx = (userId: number) =>
      ({ userId, ports: { shell: createShellPort({ cloud: t.services.cloud }) } }) as unknown as ToolContext;
    const before = await tool.run(toolCtx(u.id), { command: 'echo should-not-run' });
    expect(before.is_error).toBe(true);
    expect(before.content).toMatch(/no cloud container/);

    provisioned.push(u.id);
    expect((await api(t.app, 'POST', '/api/crm/cloud/provision', { token: u.token })).status).toBe(200);
    await t.services.cloud.pauseUser(u.id);
    const r = await tool.run(toolCtx(u.id), { command: `hostname; pwd; test -e ${t.dataDir} || echo no-host-files` });
    expect(r.is_error).toBe(false);
    expect(r.content).toContain(`-u${u.id}`);
    expect(r.content).toContain('/home/user');
    expect(r.content).toContain('no-host-files');
    expect((await api(t.app, 'GET', '/api/crm/cloud/status', { token: u.token })).body.status).toBe('ready');
    const failed = await tool.run(toolCtx(u.id), { command: 'exit 3' });
    expect(failed).toMatchObject({ is_error: true, data: { exit_code: 3 } });
  }, 60_000);
});

describe('the plan on every use', () => {
  it('once the plan no longer includes cloud, a message, the terminal, commands and the log stream pause the container and are refused', async (ctx) => {
    if (!sandboxes) ctx.skip();
    const u = await createUser(t, { plan: 'cloud' });
    provisioned.push(u.id);
    expect((await api(t.app, 'POST', '/api/crm/cloud/provision', { token: u.token })).status).toBe(200);
    const status = async () => (await api(t.app, 'GET', '/api/crm/cloud/status', { token: u.token })).body.status;
    // Cancelled (or downgraded after three failed payments, or changed by an admin): the stored plan is free.
    await t.db.updateTable('users').set({ plan: 'free' }).where('id', '=', u.id).execute();
    await t.deps.userCache.changed(u.id);

    // A chat message does not resume it: the container pauses.
    const project = await createProject(t, u.id);
    const worker = await createWorker(t, project.id);
    await api(t.app, 'POST', `/api/crm/projects/${project.name}/message`, {
      token: u.token,
      body: { worker_id: worker.id, text: 'hello' },
    });
    expect(await status()).toBe('paused');
    expect(
      containerProcesses(u.id, t.dataDir)
        .filter((p) => !isExiting(p))
        .every(isStopped),
    ).toBe(true);

    for (const route of ['ssh-verify', 'claude-verify', 'ssh-keygen']) {
      const r = await api(t.app, 'POST', `/api/crm/cloud/${route}`, { token: u.token });
      expect([route, r.status, r.body.error]).toEqual([route, 402, 'cloud_plan_required']);
    }
    const term = openTerminal(String(u.id), u.token);
    await expect(term.opened).rejects.toThrow(/refused 402/);
    const logs = openLogs(String(u.id), u.token);
    await logs.ended;
    expect(logs.status()).toBe(402);
    // The agent's command tool is refused too (the engine hands the model this error as the tool's result).
    const tool = t.deps.agentTools.get('run_command')!;
    await expect(
      tool.run(
        { userId: u.id, ports: { shell: createShellPort({ cloud: t.services.cloud }) } } as unknown as ToolContext,
        { command: 'echo should-not-run' },
      ),
    ).rejects.toMatchObject({ statusCode: 402, code: 'cloud_plan_required' });
    expect(await status()).toBe('paused');

    // With the plan back, it resumes on use.
    const setPlan = async (plan: string) => {
      await t.db.updateTable('users').set({ plan }).where('id', '=', u.id).execute();
      await t.deps.userCache.changed(u.id);
    };
    await setPlan('cloud');
    expect((await api(t.app, 'POST', '/api/crm/cloud/claude-verify', { token: u.token })).status).toBe(200);
    expect(await status()).toBe('ready');
    // A running container whose owner lost the plan (an admin's change) is paused by the next sweep.
    await setPlan('free');
    await t.db.deleteFrom('cloud_leases').execute();
    await t.services.cloud.lifecycleSweep();
    expect(
      containerProcesses(u.id, t.dataDir)
        .filter((p) => !isExiting(p))
        .every(isStopped),
    ).toBe(true);
    expect(await status()).toBe('paused');
  }, 60_000);
});
