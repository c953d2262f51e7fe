/**
 * The Docker runtime against a real Docker engine (`DOCKER_HOST`, else the local socket), with the image
 * `CLOUD_IMAGE` (default debian:bookworm-slim) already on the engine. Skipped, with the reason printed, when no
 * engine answers or the image is missing.
 */
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerRuntime, dockerConnection } from './docker-runtime.ts';

const image = process.env.CLOUD_IMAGE || 'debian:bookworm-slim';
const userId = 900_000 + (process.pid % 90_000);
const runtime = createDockerRuntime({ dockerHost: process.env.DOCKER_HOST, image });
let skip = '';

beforeAll(async () => {
  const docker = new Docker({ ...dockerConnection(process.env.DOCKER_HOST), timeout: 5000 });
  try {
    await docker.ping();
  } catch (err) {
    skip = `no Docker engine answers (${(err as Error).message})`;
  }
  if (!skip) {
    try {
      await docker.getImage(image).inspect();
    } catch {
      skip = `the image ${image} is not on the Docker engine`;
    }
  }
  if (skip) console.log(`docker runtime tests skipped: ${skip}`);
});
afterAll(async () => {
  if (!skip) await runtime.remove('', userId).catch(() => {});
});

describe('docker runtime', () => {
  it('connection options follow DOCKER_HOST', () => {
    expect(dockerConnection(undefined)).toEqual({ socketPath: '/var/run/docker.sock' });
    expect(dockerConnection('unix:///run/d.sock')).toEqual({ socketPath: '/run/d.sock' });
    expect(dockerConnection('tcp://10.0.0.2:2376')).toEqual({ protocol: 'http', host: '10.0.0.2', port: 2376 });
  });

  it('refuses a remote engine unless the operator guards its egress (CLOUD_EGRESS_FIREWALL=external)', async () => {
    const remote = createDockerRuntime({ dockerHost: 'tcp://127.0.0.1:9', image });
    await expect(remote.create(1)).rejects.toMatchObject({ code: 'container_caps_unavailable' });
    const external = createDockerRuntime({ dockerHost: 'tcp://127.0.0.1:9', image, egressFirewall: 'external' });
    await expect(external.create(1)).rejects.toMatchObject({ code: 'container_runtime_unavailable' });
  });

  it('creates a capped container on its own network, execs, freezes, resumes, removes', async (ctx) => {
    if (skip) ctx.skip();
    const c = await runtime.create(userId);
    const docker = new Docker(dockerConnection(process.env.DOCKER_HOST));
    const info = await docker.getContainer(c.containerId).inspect();
    // Docker reports the drop as given (ALL), Podman as the capabilities it dropped: what holds is inside.
    expect((await runtime.exec(c.containerId, userId, ['grep', 'CapEff', '/proc/self/status'])).output).toMatch(
      /CapEff:\s+0{16}/,
    );
    expect(info.HostConfig.SecurityOpt).toContain('no-new-privileges');
    expect(info.HostConfig.NanoCpus).toBe(1_500_000_000);
    expect(info.HostConfig.Memory).toBe(2 * 1024 * 1024 * 1024);
    expect(info.HostConfig.PidsLimit).toBe(200);
    expect(Object.keys(info.NetworkSettings.Networks)).toEqual([`crm-cloud-u${userId}`]);
    // The home of user 1000 exists and is its own, whatever the image has.
    expect((await runtime.exec(c.containerId, userId, ['sh', '-c', 'touch ~/x && stat -c %u ~'])).output).toBe(
      '1000\n',
    );
    expect(await runtime.inspect(c.containerId, userId)).toBe('running');

    const r = await runtime.exec(c.containerId, userId, ['sh', '-c', 'echo hi; id -u']);
    expect(r.output).toMatch(/hi\n1000/);

    const sh = await runtime.shell(c.containerId, userId, { cols: 80, rows: 24 });
    let out = '';
    sh.onData((b) => (out += b.toString()));
    // Typed again until the shell answers: an engine may drop what is typed before the shell reads its tty.
    const until = Date.now() + 10_000;
    for (let i = 0; !/\nfrom-tty/.test(out) && Date.now() < until; i++) {
      if (i % 40 === 0) sh.write('echo from-tty\n');
      await new Promise((res) => setTimeout(res, 50));
    }
    expect(out).toMatch(/\r?\nfrom-tty/);
    sh.kill();

    await runtime.pause(c.containerId, userId);
    expect(await runtime.inspect(c.containerId, userId)).toBe('paused');
    await runtime.resume(c.containerId, userId);
    expect(await runtime.inspect(c.containerId, userId)).toBe('running');

    await runtime.remove(c.containerId, userId);
    expect(await runtime.inspect(c.containerId, userId)).toBe('missing');
    const nets = await docker.listNetworks({ filters: { name: [`crm-cloud-u${userId}`] } });
    expect(nets.filter((n) => n.Name === `crm-cloud-u${userId}`)).toHaveLength(0);
  }, 120_000);
});
