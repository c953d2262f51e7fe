/**
 * The process runtime's kernel caps, through the terminal socket as a user would meet them: 260 background
 * processes leave at most 200 alive, nested user namespaces fail, `/tmp` is small, the sandbox runs under a host
 * uid of its own; meanwhile the service keeps answering another user and can still start its own processes.
 * Where the caps cannot be enforced, provisioning answers 503 `container_caps_unavailable`; a sandbox that would
 * see the service's files is refused (`container_layout_unsafe`).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTerminalClient } from '../../../test/terminal-client.ts';
import { api, buildTestApp, createUser, type TestApp } from '../../../test/helpers.ts';
import { createSandboxCgroups, SANDBOX_CAPS } from '../../providers/containers/cgroups.ts';
import {
  containerProcesses,
  createProcessRuntime,
  dataDirTag,
  isMountPoint,
  SANDBOX_UID_BASE,
} from '../../providers/containers/process-runtime.ts';

let t: TestApp;
let base = '';
let skip = '';
const clients: WebSocket[] = [];

beforeAll(async () => {
  t = await buildTestApp();
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  try {
    await t.deps.containers.check();
  } catch (err) {
    skip = `${(err as Error).message} ${(err as { detail?: string }).detail ?? ''}`;
    console.log(`sandbox caps tests skipped: ${skip}`);
  }
});
afterAll(async () => {
  for (const c of clients) c.terminate();
  await t?.close();
});

const terminal = (userId: number, token: string) => openTerminalClient(base, userId, token, { sockets: clients });

const hostSpawns = () =>
  new Promise<boolean>((resolve) => execFile('git', ['--version'], { timeout: 10_000 }, (err) => resolve(!err)));

describe('process runtime caps', () => {
  it('holds a fork flood, nested namespaces and /tmp inside; the service keeps answering', async (ctx) => {
    if (skip) ctx.skip();
    const u = await createUser(t, { plan: 'cloud' });
    const other = await createUser(t);
    expect((await api(t.app, 'POST', '/api/crm/cloud/provision', { token: u.token })).status).toBe(200);
    try {
      const term = terminal(u.id, u.token);
      await term.opened;
      // Nested user namespaces are refused; the sandbox's /tmp is the small tmpfs.
      term.ws.send('unshare -Ur true 2>/dev/null; echo "unshare-rc=$?"; df -k /tmp | tail -1\n');
      expect(Number((await term.waitFor(/unshare-rc=(\d+)/))[1])).not.toBe(0);
      const df = await term.waitFor(/\n\S+\s+(\d+)\s+\d+\s+\d+\s+\d+%\s+\/tmp/);
      expect(Number(df[1]) * 1024).toBeLessThanOrEqual(SANDBOX_CAPS.tmpBytes);

      // On the host, every process of the sandbox runs under the user's own uid, never the service's.
      const uids = containerProcesses(u.id, t.dataDir).map((p) => {
        const status = fs.readFileSync(`/proc/${p.pid}/status`, 'utf8');
        return { cmd: p.cmdline, uid: Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]) };
      });
      const inside = uids.filter((p) => /^\/bin\/(ba)?sh -i|^bash -i|^sleep infinity/.test(p.cmd));
      expect(inside.length).toBeGreaterThan(0);
      for (const p of inside) expect(p.uid).toBe(SANDBOX_UID_BASE + u.id);

      // 260 background processes: the group's cap (200) stops the rest; counted with shell builtins only.
      term.ws.send(
        "sh -c '(i=0; while [ $i -lt 260 ]; do sleep 60 & i=$((i+1)); done) 2>/dev/null; set -- /proc/[0-9]*; echo ALIVE=$#'\n",
      );
      const alive = Number((await term.waitFor(/ALIVE=(\d+)/, 60_000))[1]);
      expect(alive).toBeGreaterThan(150);
      expect(alive).toBeLessThanOrEqual(SANDBOX_CAPS.pids);
      const cg = createSandboxCgroups({ tag: dataDirTag(t.dataDir) });
      expect(cg.pidsCurrent(u.id)).toBeLessThanOrEqual(SANDBOX_CAPS.pids);
      expect(cg.pidsCurrent(u.id)).toBeGreaterThan(150);
      if (cg.layout.version === 1) {
        const mem = path.join(cg.layout.bases.memory, `u${u.id}`, 'memory.limit_in_bytes');
        expect(Number(fs.readFileSync(mem, 'utf8'))).toBe(SANDBOX_CAPS.memoryBytes);
        const quota = path.join(cg.layout.bases.cpu, `u${u.id}`, 'cpu.cfs_quota_us');
        expect(Number(fs.readFileSync(quota, 'utf8'))).toBe(150_000);
      }

      // Meanwhile another user is answered and the service can start its own processes (git, ffmpeg, …).
      const started = Date.now();
      const me = await api(t.app, 'GET', '/api/auth/me', { token: other.token });
      expect(me.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(5000);
      expect(await hostSpawns()).toBe(true);
    } finally {
      expect((await api(t.app, 'POST', '/api/crm/cloud/deprovision', { token: u.token })).status).toBe(200);
    }
    expect(containerProcesses(u.id, t.dataDir)).toHaveLength(0);
    const cg = createSandboxCgroups({ tag: dataDirTag(t.dataDir) });
    expect(cg.members(u.id)).toHaveLength(0);
    if (cg.layout.version === 1) expect(fs.existsSync(path.join(cg.layout.bases.pids, `u${u.id}`))).toBe(false);
  }, 120_000);

  it('holds the home to CLOUD_HOME_MB with its own file system, removed with the container', async (ctx) => {
    if (skip) ctx.skip();
    const small = await buildTestApp({ env: { CLOUD_HOME_MB: '16' } });
    const url = await small.app.listen({ port: 0, host: '127.0.0.1' });
    const u = await createUser(small, { plan: 'cloud' });
    const home = path.join(small.dataDir, 'cloud', `u${u.id}`, 'home');
    try {
      expect((await api(small.app, 'POST', '/api/crm/cloud/provision', { token: u.token })).status).toBe(200);
      expect(isMountPoint(home)).toBe(true);
      const ws = new WebSocket(`${url.replace('http', 'ws')}/api/crm/ws/cloud/${u.id}/terminal?token=${u.token}`);
      clients.push(ws);
      let out = '';
      ws.on('message', (d) => (out += d.toString()));
      await new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve());
        ws.once('error', reject);
      });
      // 40 MB into a 16 MiB home: the kernel refuses the rest.
      ws.send('head -c 40000000 /dev/zero > ~/big 2>/dev/null; echo "write-rc=$?"; wc -c < ~/big | sed "s/^/size=/"\n');
      const until = Date.now() + 30_000;
      while (!/size=\d+/.test(out) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      expect(Number(/write-rc=(\d+)/.exec(out)?.[1])).not.toBe(0);
      expect(Number(/size=(\d+)/.exec(out)?.[1])).toBeLessThanOrEqual(16 * 1024 * 1024);
      ws.terminate();
    } finally {
      expect((await api(small.app, 'POST', '/api/crm/cloud/deprovision', { token: u.token })).status).toBe(200);
      expect(isMountPoint(home)).toBe(false);
      await small.close();
    }
  }, 120_000);

  it('answers 503 container_caps_unavailable where the caps cannot be enforced, unless allowed', async () => {
    const noCgroups = fs.mkdtempSync(path.join(path.resolve('.tmp'), 'nocg-'));
    const dataDir = fs.mkdtempSync(path.join(path.resolve('.tmp'), 'nocg-data-'));
    const strict = await buildTestApp({
      overrides: { containers: createProcessRuntime({ dataDir, cgroupRoot: noCgroups }) },
    });
    try {
      const u = await createUser(strict, { plan: 'cloud' });
      const r = await api(strict.app, 'POST', '/api/crm/cloud/provision', { token: u.token });
      expect(r.status).toBe(503);
      expect(r.body.error).toBe('container_caps_unavailable');
      expect(JSON.stringify(r.body)).not.toContain(noCgroups);
      expect((await api(strict.app, 'GET', '/api/crm/cloud/status', { token: u.token })).body).toEqual({
        status: 'none',
      });
      // The operator's explicit opt-out runs sandboxes without the caps (when sandboxes work here at all).
      const loose = createProcessRuntime({ dataDir, cgroupRoot: noCgroups, allowUncapped: true });
      if (!skip) await expect(loose.check()).resolves.toBeUndefined();
    } finally {
      await strict.close();
      fs.rmSync(noCgroups, { recursive: true, force: true });
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('refuses sandboxes that would see DATA_DIR or the checkout (container_layout_unsafe)', async () => {
    for (const o of [
      { dataDir: '/usr/share/crm-data-never-made' },
      { dataDir: path.resolve('.tmp', 'x'), checkoutDir: '/usr/lib/node_modules/crm' },
    ]) {
      const rt = createProcessRuntime({ ...o, allowUncapped: true });
      await expect(rt.check()).rejects.toMatchObject({ code: 'container_layout_unsafe' });
    }
    expect(fs.existsSync('/usr/share/crm-data-never-made')).toBe(false);
  });
});
