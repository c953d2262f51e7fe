/**
 * The `docker` container runtime: one container per user through the Docker Engine API (`dockerode`;
 * `DOCKER_HOST`, else the local socket), on an isolated bridge network of its own (`crm-cloud-u<userId>`,
 * inter-container traffic off), from the image `CLOUD_IMAGE`.
 *
 * Caps (specification, Limits → Cloud): all capabilities dropped, `no-new-privileges`, 1.5 CPUs, 2 GB memory
 * (no extra swap), 200 processes. Pause is the engine's freeze (cgroup freezer); the terminal is an exec with
 * a TTY; commands are execs without one.
 */
import type Docker from 'dockerode';
import { PassThrough } from 'node:stream';
import {
  type ContainerRuntime,
  type ExecResult,
  type LiveState,
  RuntimeUnavailable,
  type ShellSession,
  tailOutput,
} from './runtime.ts';

export interface DockerRuntimeOptions {
  /** `DOCKER_HOST`: `unix:///path`, `tcp://host:port` or `http://host:port`; unset: the local socket. */
  dockerHost?: string;
  /** The image of the containers (it must exist on the engine or be pullable by it). */
  image: string;
}

const nameOf = (userId: number) => `crm-cloud-u${userId}`;

/** dockerode's connection options for a DOCKER_HOST value. */
export function dockerConnection(host: string | undefined): Docker.DockerOptions {
  if (!host) return { socketPath: '/var/run/docker.sock' };
  if (host.startsWith('unix://')) return { socketPath: host.slice('unix://'.length) };
  const u = new URL(host.replace(/^tcp:/, 'http:'));
  return { protocol: u.protocol === 'https:' ? 'https' : 'http', host: u.hostname, port: Number(u.port || 2375) };
}

const statusOf = (err: unknown) => (err as { statusCode?: number }).statusCode;

export function createDockerRuntime(opts: DockerRuntimeOptions): ContainerRuntime {
  // dockerode is imported at first use (~0.4 s and ~30 MiB of every start otherwise, Docker or not).
  let client: Promise<Docker> | undefined;
  const engine = () =>
    (client ??= import('dockerode').then(
      ({ default: Dockerode }) => new Dockerode({ ...dockerConnection(opts.dockerHost), timeout: 30_000 }),
    ));

  const unavailable = (err: unknown) =>
    new RuntimeUnavailable('The Docker engine does not answer.', (err as Error).message?.slice(0, 500) ?? '');

  const check = async () => {
    try {
      const docker = await engine();
      await docker.ping();
    } catch (err) {
      throw unavailable(err);
    }
  };

  /** Run an exec and collect its demultiplexed output. */
  const runExec = async (
    containerId: string,
    argv: string[],
    timeoutMs: number,
    input?: string,
  ): Promise<ExecResult> => {
    const docker = await engine();
    const c = docker.getContainer(containerId);
    const exec = await c.exec({
      Cmd: argv,
      AttachStdout: true,
      AttachStderr: true,
      AttachStdin: input !== undefined,
      Tty: false,
      User: '1000:1000',
      WorkingDir: '/home/user',
    });
    const stream = await exec.start({ hijack: true, stdin: input !== undefined });
    let output = '';
    const sink = new PassThrough();
    sink.on('data', (b: Buffer) => {
      output = tailOutput(output + b.toString('utf8'));
    });
    docker.modem.demuxStream(stream, sink, sink);
    if (input !== undefined) stream.end(input);
    let timedOut = false;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timedOut = true;
        stream.destroy();
        resolve();
      }, timeoutMs);
      stream.on('end', () => {
        clearTimeout(timer);
        resolve();
      });
      stream.on('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    const info = await exec.inspect().catch(() => undefined);
    return { code: timedOut ? null : (info?.ExitCode ?? null), output, timedOut };
  };

  return {
    kind: 'docker',
    check,

    async create(userId) {
      await check();
      const name = nameOf(userId);
      try {
        const docker = await engine();
        const nets = await docker.listNetworks({ filters: { name: [name] } });
        if (!nets.some((n) => n.Name === name)) {
          await docker.createNetwork({
            Name: name,
            Driver: 'bridge',
            Options: { 'com.docker.network.bridge.enable_icc': 'false' },
            Labels: { 'crm.cloud.user': String(userId) },
          });
        }
        // A leftover container of the same name (a failed earlier attempt) is replaced.
        await docker
          .getContainer(name)
          .remove({ force: true })
          .catch(() => {});
        const c = await docker.createContainer({
          name,
          Image: opts.image,
          Cmd: ['sleep', 'infinity'],
          Hostname: name,
          User: '1000:1000',
          WorkingDir: '/tmp',
          Env: ['HOME=/home/user', 'TERM=xterm-256color', 'LANG=C.UTF-8'],
          Labels: { 'crm.cloud.user': String(userId) },
          HostConfig: {
            NetworkMode: name,
            CapDrop: ['ALL'],
            SecurityOpt: ['no-new-privileges'],
            NanoCpus: 1_500_000_000,
            Memory: 2 * 1024 * 1024 * 1024,
            MemorySwap: 2 * 1024 * 1024 * 1024,
            PidsLimit: 200,
            RestartPolicy: { Name: 'unless-stopped' },
          },
        });
        await c.start();
        // The home of user 1000 (the image need not have one).
        await runExec(c.id, ['sh', '-c', 'mkdir -p /home/user 2>/dev/null || true'], 10_000);
        return { containerId: c.id, serverIp: '127.0.0.1', port: null, internalPort: null };
      } catch (err) {
        if (err instanceof RuntimeUnavailable) throw err;
        throw new RuntimeUnavailable('The container could not be created.', (err as Error).message?.slice(0, 500));
      }
    },

    async inspect(containerId): Promise<LiveState> {
      try {
        const docker = await engine();
        const info = await docker.getContainer(containerId).inspect();
        if (info.State.Paused) return 'paused';
        return info.State.Running ? 'running' : 'stopped';
      } catch (err) {
        if (statusOf(err) === 404) return 'missing';
        throw unavailable(err);
      }
    },

    async pause(containerId) {
      const docker = await engine().catch((err) => {
        throw unavailable(err);
      });
      await docker
        .getContainer(containerId)
        .pause()
        .catch((err) => {
          // 409: already paused or not running.
          if (statusOf(err) !== 409 && statusOf(err) !== 404) throw unavailable(err);
        });
    },

    async resume(containerId) {
      const docker = await engine().catch((err) => {
        throw unavailable(err);
      });
      await docker
        .getContainer(containerId)
        .unpause()
        .catch((err) => {
          if (statusOf(err) !== 409 && statusOf(err) !== 404) throw unavailable(err);
        });
    },

    async remove(containerId, userId) {
      // By id, or by its name when the id is not known (erasure after the row is gone).
      const docker = await engine().catch((err) => {
        throw unavailable(err);
      });
      await docker
        .getContainer(containerId || nameOf(userId))
        .remove({ force: true, v: true })
        .catch((err) => {
          if (statusOf(err) !== 404) throw unavailable(err);
        });
      await docker
        .getNetwork(nameOf(userId))
        .remove()
        .catch((err) => {
          if (statusOf(err) !== 404) throw unavailable(err);
        });
    },

    exec: (containerId, _userId, argv, o = {}) => runExec(containerId, argv, o.timeoutMs ?? 30_000, o.input),

    async shell(containerId, _userId, size): Promise<ShellSession> {
      const docker = await engine();
      const c = docker.getContainer(containerId);
      const exec = await c.exec({
        Cmd: [
          'sh',
          '-c',
          'cd /home/user 2>/dev/null; if command -v bash >/dev/null; then exec bash -i; else exec sh -i; fi',
        ],
        AttachStdin: true,
        AttachStdout: true,
        AttachStderr: true,
        Tty: true,
        User: '1000:1000',
        Env: ['HOME=/home/user', 'TERM=xterm-256color'],
      });
      const stream = await exec.start({ hijack: true, stdin: true, Tty: true });
      await exec.resize({ w: size.cols, h: size.rows }).catch(() => {});
      return {
        write: (d) => {
          if (!stream.destroyed) stream.write(d);
        },
        resize: (cols, rows) => void exec.resize({ w: cols, h: rows }).catch(() => {}),
        onData: (fn) => stream.on('data', fn),
        onExit: (fn) => {
          stream.once('close', () => fn(null));
        },
        kill: () => stream.destroy(),
      };
    },
  };
}
