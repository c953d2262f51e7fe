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
    expect(info.HostConfig.CapDrop).toEqual(['ALL']);
    expect(info.HostConfig.SecurityOpt).toContain('no-new-privileges');
    expect(info.HostConfig.NanoCpus).toBe(1_500_000_000);
    expect(info.HostConfig.Memory).toBe(2 * 1024 * 1024 * 1024);
    expect(info.HostConfig.PidsLimit).toBe(200);
    expect(info.HostConfig.NetworkMode).toBe(`crm-cloud-u${userId}`);
    expect(await runtime.inspect(c.containerId, userId)).toBe('running');

    const r = await runtime.exec(c.containerId, userId, ['sh', '-c', 'echo hi; id -u']);
    expect(r.output).toMatch(/hi\n1000/);

    const sh = await runtime.shell(c.containerId, userId, { cols: 80, rows: 24 });
    let out = '';
    sh.onData((b) => (out += b.toString()));
    sh.write('echo from-tty\n');
    const until = Date.now() + 10_000;
    while (!/\nfrom-tty/.test(out) && Date.now() < until) await new Promise((res) => setTimeout(res, 50));
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
