/**
 * The `docker` container runtime: one container per user through the Docker Engine API (`dockerode`;
 * `DOCKER_HOST`, else the local socket; Docker or Podman's compatible service), on an isolated bridge network
 * of its own (`crm-cloud-u<userId>`, host interface `crm-u<userId>`, inter-container traffic off), from the
 * image `CLOUD_IMAGE`.
 *
 * Caps (docs/configuration.md, "Cloud sandbox caps"; the same as the `process` runtime's): all capabilities
 * dropped, `no-new-privileges`, 1.5 CPUs, 2 GB memory (no extra swap), 200 processes, and a system-call profile
 * that refuses new user namespaces (egress-firewall.ts: sent inline to Docker; to Podman, which takes a path on
 * its host, as `CLOUD_SECCOMP_PROFILE`). Egress: the nftables guard of egress-firewall.ts refuses the engine's
 * host and private ranges from the `crm-u*` bridges; with `CLOUD_EGRESS_FIREWALL=nft` (default) the runtime loads
 * it on this host before each container is made, with `external` the operator has loaded it on the engine's host.
 * Pause is the engine's freeze (cgroup freezer); the terminal is an exec with a TTY; commands are execs without one.
 */
import type Docker from 'dockerode';
import fsp from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import {
  type ContainerRuntime,
  type ExecResult,
  type LiveState,
  orderedInput,
  RuntimeUnavailable,
  type ShellSession,
  tailOutput,
} from './runtime.ts';
import { bridgeNameOf, loadEgressFirewall, SECCOMP_PROFILE_PATH, seccompProfileText } from './egress-firewall.ts';
import { ensureHomeImage, mountHomeImage, unmountHome } from './home-image.ts';
import { isMountPoint } from './process-runtime.ts';

export interface DockerRuntimeOptions {
  /** `DOCKER_HOST`: `unix:///path`, `tcp://host:port` or `http://host:port`; unset: the local socket. */
  dockerHost?: string;
  /** The image of the containers (it must exist on the engine or be pullable by it). */
  image: string;
  /**
   * Who puts the egress guard in place (`CLOUD_EGRESS_FIREWALL`): `nft` (default) the runtime, on this host, before
   * each container is made; `external` the operator, on the engine's host.
   */
  egressFirewall?: 'nft' | 'external';
  /** The system-call profile's path on a Podman engine's host (`CLOUD_SECCOMP_PROFILE`; default the shipped file). */
  seccompProfilePath?: string;
  /** The nft binary (default `nft` on the PATH). */
  nftPath?: string;
  /** Where the homes' images live (`DATA_DIR`; under `cloud-docker/u<id>/`). */
  dataDir?: string;
  /**
   * Size of each container's home in MiB (`CLOUD_HOME_MB`; 0 or unset: the image's own folder, uncapped): an ext4
   * image loop-mounted on this host and bound as `/home/user`, when the service runs as root and the engine on
   * this host (a local socket).
   */
  homeMb?: number;
  log?: { warn(o: object, m: string): void };
}

/** The caps of every container (docs/configuration.md, "Cloud sandbox caps"). */
export const DOCKER_CAPS = {
  pids: 200,
  memoryBytes: 2 * 1024 * 1024 * 1024,
  nanoCpus: 1_500_000_000,
  /** Open files (soft, hard). */
  nofile: [4096, 8192],
  /**
   * Processes of the container's uid across the whole host (RLIMIT_NPROC counts per host uid, so it is set high:
   * the 200-process cap above is the one that holds; 32768 also stays under the limit an engine without
   * CAP_SYS_RESOURCE may raise it to).
   */
  nproc: 32768,
} as const;

const nameOf = (userId: number) => `crm-cloud-u${userId}`;

/** dockerode's connection options for a DOCKER_HOST value. */
export function dockerConnection(host: string | undefined): Docker.DockerOptions {
  if (!host) return { socketPath: '/var/run/docker.sock' };
  if (host.startsWith('unix://')) return { socketPath: host.slice('unix://'.length) };
  const u = new URL(host.replace(/^tcp:/, 'http:'));
  return { protocol: u.protocol === 'https:' ? 'https' : 'http', host: u.hostname, port: Number(u.port || 2375) };
}

/**
 * `GET /_ping` of the engine at `host` (a DOCKER_HOST value, as `dockerConnection`) over node:http, without loading
 * dockerode: the start line's and `GET /readyz`'s Docker check runs at every start, and dockerode with what it loads
 * (grpc-js, protobufjs, ssh2, …: ~300 modules) cost ~0.1–0.2 s of the main thread and ~20 MiB RSS there (bench/README.md,
 * "Start-up"). @throws when the engine does not answer 200 within `timeoutMs`.
 */
export function pingEngine(host: string | undefined, timeoutMs: number): Promise<void> {
  const c = dockerConnection(host);
  return new Promise((resolve, reject) => {
    const req = (c.protocol === 'https' ? https : http).request(
      {
        ...(c.socketPath ? { socketPath: c.socketPath } : { host: c.host, port: c.port }),
        path: '/_ping',
        method: 'GET',
        timeout: timeoutMs,
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200
            ? resolve()
            : reject(new Error(`the engine answered HTTP ${res.statusCode} to /_ping`)),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer to /_ping within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** A tar archive of one folder, `home/user/`, owned by uid and gid 1000 (mode 0755); node-tar imported at first use. */
async function homeArchive(): Promise<Buffer> {
  const { Header } = await import('tar');
  const block = Buffer.alloc(512);
  new Header({
    path: 'home/user/',
    type: 'Directory',
    mode: 0o755,
    uid: 1000,
    gid: 1000,
    size: 0,
    mtime: new Date(0),
  }).encode(block, 0);
  return Buffer.concat([block, Buffer.alloc(1024)]);
}

const statusOf = (err: unknown) => (err as { statusCode?: number }).statusCode;

/**
 * The `docker` runtime over `opts` (nothing is contacted until first use). `create` refuses with
 * RuntimeUnavailable `container_caps_unavailable` when the egress guard cannot be put in place (docs/configuration.md,
 * "Cloud sandbox caps"), `container_runtime_unavailable` when the engine does not answer or refuses the container.
 */
export function createDockerRuntime(opts: DockerRuntimeOptions): ContainerRuntime {
  // dockerode is imported at first use (~0.4 s and ~30 MiB of every start otherwise, Docker or not).
  let client: Promise<Docker> | undefined;
  const engine = () =>
    (client ??= import('dockerode').then(
      ({ default: Dockerode }) => new Dockerode({ ...dockerConnection(opts.dockerHost), timeout: 30_000 }),
    ));

  const unavailable = (err: unknown) =>
    new RuntimeUnavailable('The Docker engine does not answer.', (err as Error).message?.slice(0, 500) ?? '');

  /** Whether the homes can be capped here: a size, a data directory, root, and the engine on this host. */
  const homesCapped =
    !!opts.homeMb &&
    !!opts.dataDir &&
    process.getuid?.() === 0 &&
    (!opts.dockerHost || opts.dockerHost.startsWith('unix://'));
  if (opts.homeMb && !homesCapped)
    opts.log?.warn(
      {},
      'cloud container homes are not capped by size: that needs the service as root and the Docker engine on this host',
    );
  const homeDirOf = (userId: number) =>
    opts.dataDir ? path.join(opts.dataDir, 'cloud-docker', `u${userId}`) : undefined;
  /** The user's capped home, mounted on this host (made once); undefined where homes are not capped. */
  const cappedHome = async (userId: number): Promise<string | undefined> => {
    const dir = homeDirOf(userId);
    if (!homesCapped || !dir) return undefined;
    const mnt = path.join(dir, 'home');
    await fsp.mkdir(mnt, { recursive: true, mode: 0o700 });
    if (!isMountPoint(mnt)) {
      await ensureHomeImage(path.join(dir, 'home.img'), opts.homeMb!, 1000);
      await mountHomeImage(path.join(dir, 'home.img'), mnt);
    }
    return mnt;
  };

  const check = async () => {
    try {
      await pingEngine(opts.dockerHost, 30_000);
    } catch (err) {
      throw unavailable(err);
    }
  };

  /** Whether the engine is Podman's Docker-compatible service (it takes the profile as a path, not inline). */
  let podman: Promise<boolean> | undefined;
  const isPodman = () =>
    (podman ??= engine()
      .then((docker) => docker.version())
      .then(
        (v) => (v.Components ?? []).some((c) => /podman/i.test(c.Name)),
        (err: unknown) => {
          podman = undefined;
          throw unavailable(err);
        },
      ));
  const seccompOpt = async () =>
    `seccomp=${(await isPodman()) ? (opts.seccompProfilePath ?? SECCOMP_PROFILE_PATH) : seccompProfileText()}`;

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
      const guard = opts.egressFirewall ?? 'nft';
      // A guard loaded on this host does not guard an engine elsewhere.
      if (guard === 'nft' && opts.dockerHost && !opts.dockerHost.startsWith('unix://'))
        throw new RuntimeUnavailable(
          "This server cannot enforce the cloud containers' network limits.",
          'DOCKER_HOST names a remote engine: load cloud-egress.nft on its host and set CLOUD_EGRESS_FIREWALL=external',
          'container_caps_unavailable',
        );
      await check();
      if (guard === 'nft') await loadEgressFirewall(opts.nftPath);
      const name = nameOf(userId);
      const securityOpt = ['no-new-privileges', await seccompOpt()];
      const home = await cappedHome(userId);
      try {
        const docker = await engine();
        // A leftover container of the same name (a failed earlier attempt) is replaced, and so is its network:
        // one made before the egress guard matched its bridge by name would not be guarded.
        await docker
          .getContainer(name)
          .remove({ force: true })
          .catch(() => {});
        await docker
          .getNetwork(name)
          .remove()
          .catch((err) => {
            if (statusOf(err) !== 404) throw err;
          });
        await docker.createNetwork({
          Name: name,
          Driver: 'bridge',
          Options: {
            'com.docker.network.bridge.enable_icc': 'false',
            // The host interface the egress guard matches (crm-u*).
            'com.docker.network.bridge.name': bridgeNameOf(userId),
          },
          Labels: { 'crm.cloud.user': String(userId) },
        });
        const c = await docker.createContainer({
          name,
          Image: opts.image,
          Cmd: ['sleep', 'infinity'],
          Hostname: name,
          User: '1000:1000',
          WorkingDir: '/tmp',
          Env: [
            'PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin',
            'HOME=/home/user',
            'TERM=xterm-256color',
            'LANG=C.UTF-8',
          ],
          Labels: { 'crm.cloud.user': String(userId) },
          HostConfig: {
            NetworkMode: name,
            // The engine's init (docker-init, Podman's catatonit) as PID 1 reaps orphans: without it a fork
            // flood's exited processes stay as zombies and hold the process cap.
            Init: true,
            CapDrop: ['ALL'],
            SecurityOpt: securityOpt,
            NanoCpus: DOCKER_CAPS.nanoCpus,
            Memory: DOCKER_CAPS.memoryBytes,
            MemorySwap: DOCKER_CAPS.memoryBytes,
            PidsLimit: DOCKER_CAPS.pids,
            Ulimits: [
              { Name: 'nofile', Soft: DOCKER_CAPS.nofile[0], Hard: DOCKER_CAPS.nofile[1] },
              { Name: 'nproc', Soft: DOCKER_CAPS.nproc, Hard: DOCKER_CAPS.nproc },
            ],
            RestartPolicy: { Name: 'unless-stopped' },
            // The capped home: its own file system, so a write past CLOUD_HOME_MB fails in the kernel.
            ...(home ? { Binds: [`${home}:/home/user`] } : {}),
          },
        });
        // The home of user 1000, before the start (the image need not have one, and user 1000 cannot make it
        // under a root-owned /home): the engine unpacks it with the owner the archive names. A bound home is one.
        if (!home) await c.putArchive(await homeArchive(), { path: '/' });
        await c.start();
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
      const dir = homeDirOf(userId);
      if (dir) {
        if (isMountPoint(path.join(dir, 'home'))) await unmountHome(path.join(dir, 'home'));
        await fsp.rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
      }
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
        ...orderedInput(
          (d) => {
            if (!stream.destroyed) stream.write(d);
          },
          (cols, rows) =>
            exec.resize({ w: cols, h: rows }).then(
              () => {},
              () => {},
            ),
        ),
        onData: (fn) => stream.on('data', fn),
        onExit: (fn) => {
          stream.once('close', () => fn(null));
        },
        kill: () => stream.destroy(),
      };
    },
  };
}
