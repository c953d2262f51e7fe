/**
 * The `docker` runtime against a real engine: Podman's Docker-compatible API service (with runc) started on a
 * socket of this test, a tiny image made here from busybox (no registry), and a user's container provisioned
 * through the service, then used through the terminal socket as a user would: 260 background processes leave at
 * most 200 alive, `unshare -Ur true` fails, connections to the engine's host (the bridge's gateway and the host's
 * own address) and to private and link-local addresses beyond it (a network namespace this test makes) fail;
 * meanwhile the service keeps answering another user. A control then drops the egress guard and the same
 * connections go through, so the refusals above are the guard's doing.
 * Skipped, with the reason printed, when podman or busybox is missing or this is not root.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTerminalClient } from '../../../test/terminal-client.ts';
import { api, buildTestApp, createUser, type TestApp } from '../../../test/helpers.ts';
import { dockerConnection, DOCKER_CAPS } from '../../providers/containers/docker-runtime.ts';
import { bridgeNameOf, EGRESS_TABLE, loadEgressFirewall } from '../../providers/containers/egress-firewall.ts';
import { isMountPoint } from '../../providers/containers/process-runtime.ts';

const run = (cmd: string, args: string[], timeout = 60_000) =>
  new Promise<string>((resolve, reject) =>
    execFile(cmd, args, { timeout, maxBuffer: 16 * 1024 * 1024 }, (err, out, stderr) =>
      err ? reject(new Error(`${cmd} ${args.join(' ')}: ${stderr || err.message}`)) : resolve(out),
    ),
  );
const has = (cmd: string) =>
  run('sh', ['-c', `command -v ${cmd}`]).then(
    () => true,
    () => false,
  );

/** Whether an ELF binary is statically linked (no PT_INTERP program header): it then runs in any image. */
function isStatic(file: string): boolean {
  const b = fs.readFileSync(file);
  if (b.readUInt32BE(0) !== 0x7f454c46 || b[4] !== 2) return false;
  const phoff = Number(b.readBigUInt64LE(0x20));
  const size = b.readUInt16LE(0x36);
  for (let i = 0; i < b.readUInt16LE(0x38); i++) if (b.readUInt32LE(phoff + i * size) === 3) return false;
  return true;
}

const tag = `${process.pid}`;
const image = `localhost/crm-cloud-test:${tag}`;
const netns = `crmtest${tag}`;
const vethHost = `crmv${tag}`.slice(0, 15);
// Addresses of the test's own network namespace on this machine: a private (RFC 1918) and a link-local one.
const privateAddr = '10.255.77.2';
const linkLocalAddr = '169.254.77.2';
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'crm-podman-'));
const socket = path.join(work, 'podman.sock');

let skip = '';
let service: ChildProcess | undefined;
let t: TestApp;
let base = '';
let hostServer: net.Server | undefined;
let nsServer: ChildProcess | undefined;
let hostPort = 0;
const nsPort = 18_000 + (process.pid % 1000);
const clients: WebSocket[] = [];

/** The busybox root filesystem as a tar, imported as the containers' image. */
async function makeImage() {
  const root = path.join(work, 'rootfs');
  for (const d of ['bin', 'tmp', 'etc', 'home/user', 'proc', 'sys', 'dev'])
    fs.mkdirSync(path.join(root, d), { recursive: true });
  fs.copyFileSync('/bin/busybox', path.join(root, 'bin', 'busybox'));
  fs.chmodSync(path.join(root, 'bin', 'busybox'), 0o755);
  for (const applet of (await run('/bin/busybox', ['--list'])).split('\n').filter(Boolean))
    if (applet !== 'busybox') fs.symlinkSync('busybox', path.join(root, 'bin', applet));
  fs.chmodSync(path.join(root, 'tmp'), 0o1777);
  fs.writeFileSync(
    path.join(root, 'etc', 'passwd'),
    'root:x:0:0::/root:/bin/sh\nuser:x:1000:1000::/home/user:/bin/sh\n',
  );
  fs.writeFileSync(path.join(root, 'etc', 'group'), 'root:x:0:\nuser:x:1000:\n');
  fs.chownSync(path.join(root, 'home', 'user'), 1000, 1000);
  await run('tar', ['-C', root, '-cf', path.join(work, 'rootfs.tar'), '.']);
  await run('podman', ['import', '--change', 'ENV PATH=/bin', path.join(work, 'rootfs.tar'), image], 120_000);
}

/** A network namespace with a private and a link-local address, reached from the host over a veth pair. */
async function makeNetns() {
  await run('ip', ['netns', 'add', netns]);
  await run('ip', ['link', 'add', vethHost, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns]);
  await run('ip', ['addr', 'add', '10.255.77.1/30', 'dev', vethHost]);
  await run('ip', ['addr', 'add', '169.254.77.1/30', 'dev', vethHost]);
  await run('ip', ['link', 'set', vethHost, 'up']);
  for (const a of [`${privateAddr}/30`, `${linkLocalAddr}/30`])
    await run('ip', ['netns', 'exec', netns, 'ip', 'addr', 'add', a, 'dev', 'eth0']);
  await run('ip', ['netns', 'exec', netns, 'ip', 'link', 'set', 'eth0', 'up']);
  await run('ip', ['netns', 'exec', netns, 'ip', 'link', 'set', 'lo', 'up']);
  await run('ip', ['netns', 'exec', netns, 'ip', 'route', 'add', 'default', 'via', '10.255.77.1']);
  nsServer = spawn(
    'ip',
    [
      'netns',
      'exec',
      netns,
      process.execPath,
      '-e',
      `require('net').createServer((s) => s.end('ns-ok\\n')).listen(${nsPort}, '0.0.0.0'); setTimeout(() => process.exit(0), 300000)`,
    ],
    { stdio: 'ignore' },
  );
}

async function waitForSocket(ms: number) {
  const docker = new Docker({ ...dockerConnection(`unix://${socket}`), timeout: 2000 });
  const until = Date.now() + ms;
  for (;;) {
    try {
      await docker.ping();
      return;
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

beforeAll(async () => {
  if (!(await has('podman'))) skip = 'podman is not installed (Debian packages podman and runc)';
  else if (!fs.existsSync('/bin/busybox') || !isStatic('/bin/busybox'))
    skip = 'a static busybox is not installed (Debian package busybox-static)';
  else if (process.getuid?.() !== 0) skip = 'the engine runs rootful here: the test needs root';
  else if (!(await has('nft'))) skip = 'nftables (nft) is not installed';
  if (skip) {
    console.log(`docker runtime caps tests skipped: ${skip}`);
    return;
  }
  service = spawn('podman', ['--runtime', 'runc', 'system', 'service', '--time=0', `unix://${socket}`], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let serviceLog = '';
  service.stderr!.on('data', (b: Buffer) => (serviceLog = (serviceLog + b.toString()).slice(-2000)));
  await Promise.all([
    makeImage(),
    makeNetns(),
    waitForSocket(30_000).catch((err) => {
      throw new Error(`podman's API service did not answer: ${(err as Error).message} ${serviceLog}`);
    }),
  ]);
  hostServer = net.createServer((s) => s.end('host-ok\n'));
  await new Promise<void>((resolve) => hostServer!.listen(0, '0.0.0.0', resolve));
  hostPort = (hostServer.address() as net.AddressInfo).port;
  t = await buildTestApp({
    env: { CONTAINER_RUNTIME: 'docker', DOCKER_HOST: `unix://${socket}`, CLOUD_IMAGE: image, CLOUD_HOME_MB: '16' },
  });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
}, 180_000);

afterAll(async () => {
  for (const c of clients) c.terminate();
  await t?.close();
  hostServer?.close();
  nsServer?.kill('SIGKILL');
  await run('ip', ['netns', 'del', netns]).catch(() => {});
  await run('ip', ['link', 'del', vethHost]).catch(() => {});
  if (service) {
    await run('podman', ['rmi', '-f', image]).catch(() => {});
    service.kill('SIGTERM');
  }
  fs.rmSync(work, { recursive: true, force: true });
}, 60_000);

const terminal = (userId: number, token: string) =>
  openTerminalClient(base, userId, token, { sockets: clients, waitMs: 30_000 });

describe('docker runtime on a real engine (podman)', () => {
  it('holds a fork flood, refuses nested namespaces and private egress; the service keeps answering', async (ctx) => {
    if (skip) ctx.skip();
    const u = await createUser(t, { plan: 'cloud' });
    const other = await createUser(t);
    const prov = await api(t.app, 'POST', '/api/crm/cloud/provision', { token: u.token });
    expect(prov.status, JSON.stringify(prov.body)).toBe(200);
    try {
      // The engine holds the caps it was given.
      const docker = new Docker(dockerConnection(`unix://${socket}`));
      const info = await docker.getContainer(`crm-cloud-u${u.id}`).inspect();
      expect(info.HostConfig.PidsLimit).toBe(DOCKER_CAPS.pids);
      expect(info.HostConfig.Memory).toBe(DOCKER_CAPS.memoryBytes);
      expect(info.HostConfig.NanoCpus).toBe(DOCKER_CAPS.nanoCpus);
      const nets = await docker.listNetworks({ filters: { name: [`crm-cloud-u${u.id}`] } });
      expect(nets).toHaveLength(1);
      expect(fs.existsSync(`/sys/class/net/${bridgeNameOf(u.id)}`)).toBe(true);

      const term = terminal(u.id, u.token);
      await term.opened;
      // No capabilities, no privilege gain, no nested user namespace.
      term.ws.send(
        'grep -E "^(CapEff|NoNewPrivs)" /proc/self/status; unshare -Ur true 2>/dev/null; echo "unshare-rc=$?"\n',
      );
      expect(Number((await term.waitFor(/unshare-rc=(\d+)/))[1])).not.toBe(0);
      await term.waitFor(/CapEff:\s+0000000000000000/);
      await term.waitFor(/NoNewPrivs:\s+1/);

      // Egress: the engine's host (the bridge's gateway and the host's own address) and private and link-local
      // addresses beyond it are refused.
      term.ws.send('echo "gw=$(ip route | awk \'/^default/{print $3}\')"\n');
      const gateway = (await term.waitFor(/gw=(\d+\.\d+\.\d+\.\d+)/))[1];
      // The host's own address on a network of its own (not an engine's bridge nor the test's veth).
      const hostAddr = Object.entries(os.networkInterfaces())
        .filter(([name]) => !/^(crm|podman|cni|veth|docker|br-)/.test(name))
        .flatMap(([, addrs]) => addrs ?? [])
        .find((a) => a.family === 'IPv4' && !a.internal)?.address;
      const targets = [
        `${gateway}:${hostPort}`,
        ...(hostAddr ? [`${hostAddr}:${hostPort}`] : []),
        `${privateAddr}:${nsPort}`,
        `${linkLocalAddr}:${nsPort}`,
      ];
      const probe = async (label: string) => {
        const results: Record<string, string> = {};
        for (const target of targets) {
          const [h, p] = target.split(':');
          term.ws.send(`r=$(nc -w 3 ${h} ${p} </dev/null 2>&1); echo "${label} ${target} =""> [$r]"\n`);
          results[target] = (
            await term.waitFor(new RegExp(`${label} ${target.replace(/\./g, '\\.')} => \\[([^\\]]*)\\]`))
          )[1];
        }
        return results;
      };
      const guarded = await probe('guarded');
      for (const [target, r] of Object.entries(guarded)) expect(r, target).not.toMatch(/(host|ns)-ok/);

      // Control: without the guard the same connections go through (so the refusals above were its doing).
      await run('nft', ['delete', 'table', 'inet', EGRESS_TABLE]);
      try {
        const open = await probe('open');
        for (const [target, r] of Object.entries(open)) expect(r, target).toMatch(/(host|ns)-ok/);
      } finally {
        await loadEgressFirewall();
      }

      // The home is its own 16 MiB file system: a 40 MiB write fails in the kernel.
      term.ws.send(
        'dd if=/dev/zero of=/home/user/big bs=1M count=40 2>/dev/null; echo "dd-rc=$? size=$(wc -c < /home/user/big)"\n',
      );
      const written = await term.waitFor(/dd-rc=(\d+) size=(\d+)/, 60_000);
      expect(Number(written[1])).not.toBe(0);
      expect(Number(written[2])).toBeLessThanOrEqual(16 * 1024 * 1024);
      term.ws.send('rm -f /home/user/big\n');

      // 260 background processes: the engine's cap (200) stops the rest; counted with shell builtins only.
      term.ws.send(
        "sh -c '(i=0; while [ $i -lt 260 ]; do sleep 60 & i=$((i+1)); done) 2>/dev/null; set -- /proc/[0-9]*; echo ALIVE=$#'\n",
      );
      const alive = Number((await term.waitFor(/ALIVE=(\d+)/, 60_000))[1]);
      expect(alive).toBeGreaterThan(150);
      expect(alive).toBeLessThanOrEqual(DOCKER_CAPS.pids);
      console.log(`docker runtime caps: ${alive} of 260 processes alive; refused: ${JSON.stringify(guarded)}`);

      // Meanwhile another user is answered promptly.
      const started = Date.now();
      const me = await api(t.app, 'GET', '/api/auth/me', { token: other.token });
      expect(me.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(5000);
      const status = await api(t.app, 'GET', '/api/crm/cloud/status', { token: u.token });
      expect(status.status).toBe(200);
    } finally {
      expect((await api(t.app, 'POST', '/api/crm/cloud/deprovision', { token: u.token })).status).toBe(200);
    }
    // The home's file system goes with the container.
    expect(isMountPoint(path.join(t.dataDir, 'cloud-docker', `u${u.id}`, 'home'))).toBe(false);
  }, 240_000);
});
