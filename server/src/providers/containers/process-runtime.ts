/**
 * The `process` container runtime (the embedded default): each user's "container" is a sandbox on this host
 * made by bubblewrap (`bwrap`, Debian's `bubblewrap` package).
 *
 * The sandbox: new user, PID, network (loopback only), IPC, UTS and cgroup namespaces; all capabilities
 * dropped; an empty environment (no variable of the service reaches it); read-only `/usr` (and the
 * `/bin`, `/lib*`, `/sbin` links), a few read-only files of `/etc` (resolver, certificates, terminal data — never
 * the password hashes; `passwd`/`group` are the sandbox's own), a private `/tmp`, `/proc` and `/dev`, and its own
 * home `DATA_DIR/cloud/u<userId>/home` mounted at `/home/user`. Nothing else of the host — other users'
 * homes, the rest of `DATA_DIR`, the service's files — is visible.
 *
 * A container is a long-lived sandbox process (`sleep infinity`, detached, so it outlives a restart of the
 * service); the terminal and commands run in sandboxes over the same home. Every process of a user's
 * container carries the marker `crm-cloud-<data-dir tag>-u<userId>` (its hostname argument), so any instance on this host
 * finds them in `/proc`: pause sends SIGSTOP to them and all their descendants (orphans stay descendants:
 * each sandbox has its own PID namespace), resume SIGCONT, remove SIGKILL. The pty of the terminal comes
 * from util-linux's `script`, resizes through `stty -F` on the pty's device.
 *
 * Caps, enforced by the kernel (cgroups.ts): every process of a user's sandbox (init, terminal, commands) joins
 * the user's control group — 200 processes, 2 GB memory without extra swap, 1.5 CPUs — before it starts; the
 * sandbox runs under a host uid of its own (`uidBase + userId`, never the service's), so a fork bomb or a runaway
 * process inside cannot exhaust the service's processes; user namespaces cannot be nested (`--disable-userns`);
 * `/tmp` is a 256 MB tmpfs. The launch (as root): join the groups, enter a private mount namespace where the
 * user's folder is bound at `/tmp` (so the sandbox uid reaches its home without any access to `DATA_DIR`), switch
 * to the sandbox uid with no privilege gain (`setpriv --no-new-privs`), then exec bwrap.
 * `check` refuses (503 `container_caps_unavailable`) where these cannot be enforced — not root, no writable
 * pids/memory/cpu controllers, a bwrap without `--disable-userns` — unless the operator allows uncapped sandboxes
 * (`CLOUD_ALLOW_UNCAPPED`, docs/configuration.md), and always refuses (503 `container_layout_unsafe`) when
 * `DATA_DIR` or the service's checkout lies under a folder the sandbox sees (`/usr`, `/etc/…`).
 * The sandbox has no network.
 */
import { execFile, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { CHECKOUT_ROOT } from '../../lib/checkout.ts';
import { dirBytes } from '../../lib/dir-bytes.ts';
import { createSandboxCgroups, SANDBOX_CAPS, type SandboxCgroups } from './cgroups.ts';
import { ensureHomeImage, mountHomeImage, unmountHome } from './home-image.ts';
import {
  type ContainerRuntime,
  type ExecResult,
  type LiveState,
  orderedInput,
  RuntimeUnavailable,
  type ShellSession,
  tailOutput,
} from './runtime.ts';

/** Read-only files and folders of the host's /etc a shell needs (none of them holds a secret). */
const ETC_FILES = [
  'alternatives',
  'bash.bashrc',
  'ca-certificates',
  'ca-certificates.conf',
  'hosts',
  'inputrc',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'localtime',
  'nsswitch.conf',
  'profile',
  'resolv.conf',
  'ssl/certs',
  'terminfo',
  'timezone',
];
const SANDBOX_HOME = '/home/user';

export interface ProcessRuntimeOptions {
  /** The service's DATA_DIR: homes live under `<dataDir>/cloud/u<userId>/`. */
  dataDir: string;
  /** The bwrap binary (default `bwrap` on the PATH). */
  bwrapPath?: string;
  /**
   * Run sandboxes without the kernel caps where they cannot be enforced (`CLOUD_ALLOW_UNCAPPED`): then the
   * sandbox runs as the service's own uid, with no process, memory or CPU cap. Default false: 503.
   */
  allowUncapped?: boolean;
  /** The cgroup filesystem (default `/sys/fs/cgroup`). */
  cgroupRoot?: string;
  /** The service's checkout (default: the one holding this code); it must not be visible in the sandbox. */
  checkoutDir?: string;
  /** User N's sandbox runs as host uid and gid `uidBase + N` (default 1 500 000 000). */
  uidBase?: number;
  /**
   * Size of each capped sandbox's home in MiB (`CLOUD_HOME_MB`): the home is an ext4 file system in
   * `<user folder>/home.img`, loop-mounted at the home, so the kernel stops the sandbox's writes there. 0: a plain
   * folder (no kernel cap).
   */
  homeMb?: number;
  /** Warnings (uncapped sandboxes). */
  log?: { warn(o: object, m: string): void };
}

/** The first host uid of sandboxes: far above system and login accounts and rootless container ranges. */
export const SANDBOX_UID_BASE = 1_500_000_000;

/** Host folders bound into every sandbox (read-only): `/usr`, the `/bin`-like top folders, files of `/etc`. */
export const boundHostPaths = (): string[] => [
  '/usr',
  ...['/bin', '/lib', '/lib64', '/lib32', '/sbin'],
  ...ETC_FILES.map((f) => `/etc/${f}`),
];

/**
 * Which of the service's own folders a sandbox would see: those at or under a host path bound into it.
 * @returns one line per problem (empty when the layout is safe).
 */
export function exposedServicePaths(own: { dataDir: string; checkoutDir: string }, bound: string[]): string[] {
  const problems: string[] = [];
  const under = (p: string, b: string) => p === b || p.startsWith(b.endsWith('/') ? b : `${b}/`);
  const real = (p: string) => {
    try {
      return fs.realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  for (const [name, p] of [
    ['DATA_DIR', own.dataDir],
    ['the checkout', own.checkoutDir],
  ] as const) {
    for (const candidate of new Set([path.resolve(p), real(p)])) {
      const b = bound.find((x) => under(candidate, x) || under(candidate, real(x)));
      if (b) {
        problems.push(`${name} (${candidate}) lies under ${b}, which every sandbox sees`);
        break;
      }
    }
  }
  return problems;
}

/**
 * The launch as root (argv after `sh -c`): join each cgroup.procs file given before `--`, enter a private mount
 * namespace, bind the user's folder ($1) at /tmp, switch to uid and gid $2 with no privilege gain, exec the rest.
 */
const LAUNCH = [
  'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift',
  'exec unshare --mount --propagation private -- /bin/sh -c \'mount --rbind "$1" /tmp || exit 125; id=$2; shift 2; exec setpriv --reuid "$id" --regid "$id" --clear-groups --no-new-privs -- "$@"\' crm-sandbox "$@"',
].join('\n');

/**
 * The marker every process of user `userId`'s container carries: the user and a tag of the service's data
 * directory, so two services on one host (or two test runs) never take each other's processes for their own.
 */
export const markerOf = (userId: number, dataDir: string) => `crm-cloud-${dataDirTag(dataDir)}-u${userId}`;

/** A short tag of the service's data directory (10 hex digits): names its markers and its cgroup of sandboxes. */
export const dataDirTag = (dataDir: string) =>
  crypto.createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 10);

/** Whether `dir` is a mount point of this process's mount namespace (`/proc/self/mountinfo`). */
export function isMountPoint(dir: string): boolean {
  let real: string;
  try {
    real = fs.realpathSync(dir);
  } catch {
    return false;
  }
  // The mount point is the fifth field, with spaces and the like written as octal escapes.
  const unescape = (s: string) => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
  return fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((l) => l && unescape(l.split(' ')[4] ?? '') === real);
}

/** A shell-quoted word (single quotes). */
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export interface ProcInfo {
  pid: number;
  ppid: number;
  state: string;
  cmdline: string;
}

/**
 * When process `pid` started (`/proc/<pid>/stat` field 22, clock ticks since boot): with the pid it names one
 * process for good, across its execs and after the pid is reused. @returns undefined when there is no such process.
 */
function startTimeOf(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Every process of this host visible to us: pid, parent, state letter, command line (NULs as spaces). */
function processes(): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cmdline = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ');
      out.push({ pid: Number(name), ppid: Number(rest[1]), state: rest[0], cmdline });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The processes of user `userId`'s container: those carrying its marker and all their descendants. */
export function containerProcesses(userId: number, dataDir: string): ProcInfo[] {
  const all = processes();
  const re = new RegExp(`(^|[\\s'])${markerOf(userId, dataDir)}([\\s']|$)`);
  const found = new Map<number, ProcInfo>();
  for (const p of all) if (p.pid !== process.pid && re.test(p.cmdline)) found.set(p.pid, p);
  const children = new Map<number, ProcInfo[]>();
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const queue = [...found.values()];
  while (queue.length) {
    const p = queue.pop()!;
    for (const c of children.get(p.pid) ?? []) {
      if (!found.has(c.pid)) {
        found.set(c.pid, c);
        queue.push(c);
      }
    }
  }
  return [...found.values()];
}

/** Stopped by a signal (`T`) or a tracer (`t`). */
export const isStopped = (p: ProcInfo) => p.state === 'T' || p.state === 't';
/** A zombie (`Z`) or dead (`X`) process: it runs no more and needs no signal. */
export const isExiting = (p: ProcInfo) => p.state === 'Z' || p.state === 'X';

const signalAll = (procs: ProcInfo[], sig: NodeJS.Signals) => {
  for (const p of procs) {
    try {
      process.kill(p.pid, sig);
    } catch {
      // gone meanwhile
    }
  }
};

/** Hand a folder and everything in it (links themselves, not their targets) to `uid` (group `uid` too). */
async function chownTree(dir: string, uid: number): Promise<void> {
  await fsp.lchown(dir, uid, uid);
  for (const e of await fsp.readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) await chownTree(p, uid);
    else await fsp.lchown(p, uid, uid);
  }
}

/** The `process` runtime over `opts.dataDir`. */
export function createProcessRuntime(opts: ProcessRuntimeOptions): ContainerRuntime {
  const bwrap = opts.bwrapPath ?? 'bwrap';
  const uidBase = opts.uidBase ?? SANDBOX_UID_BASE;
  const rootOf = (userId: number) => path.join(opts.dataDir, 'cloud', `u${userId}`);
  const homeOf = (userId: number) => path.join(rootOf(userId), 'home');
  const initPidFile = (userId: number) => path.join(rootOf(userId), 'init.pid');
  const uidOf = (userId: number) => uidBase + userId;
  const cgroups: SandboxCgroups = createSandboxCgroups({
    tag: dataDirTag(opts.dataDir),
    root: opts.cgroupRoot,
  });
  /** How sandboxes start here (decided by `check`): capped (own uid, cgroups) or, when allowed, not. */
  let capped = true;

  /**
   * The bwrap arguments of user `userId`'s sandbox. `src` is where the launch sees the user's folder: `/tmp`
   * when capped (bound there in a private mount namespace), the folder itself otherwise.
   */
  const sandboxArgs = (userId: number, extra: string[]): string[] => {
    const src = capped ? '/tmp' : rootOf(userId);
    const args = [
      '--unshare-all',
      '--unshare-user',
      '--disable-userns',
      '--uid',
      '1000',
      '--gid',
      '1000',
      '--cap-drop',
      'ALL',
      '--clearenv',
      '--setenv',
      'PATH',
      '/usr/local/bin:/usr/bin:/bin',
      '--setenv',
      'HOME',
      SANDBOX_HOME,
      '--setenv',
      'USER',
      'user',
      '--setenv',
      'TERM',
      'xterm-256color',
      '--setenv',
      'LANG',
      'C.UTF-8',
      '--hostname',
      markerOf(userId, opts.dataDir),
      '--ro-bind',
      '/usr',
      '/usr',
    ];
    for (const d of ['/bin', '/lib', '/lib64', '/lib32', '/sbin']) {
      let link: string | undefined;
      try {
        link = fs.readlinkSync(d);
      } catch {
        link = undefined;
      }
      if (link !== undefined) args.push('--symlink', link, d);
      else if (fs.existsSync(d)) args.push('--ro-bind', d, d);
    }
    for (const f of ETC_FILES) args.push('--ro-bind-try', `/etc/${f}`, `/etc/${f}`);
    args.push(
      '--ro-bind',
      path.join(src, 'etc', 'passwd'),
      '/etc/passwd',
      '--ro-bind',
      path.join(src, 'etc', 'group'),
      '/etc/group',
      '--proc',
      '/proc',
      '--dev',
      '/dev',
      '--size',
      String(SANDBOX_CAPS.tmpBytes),
      '--tmpfs',
      '/tmp',
      '--bind',
      path.join(src, 'home'),
      SANDBOX_HOME,
      '--chdir',
      SANDBOX_HOME,
      ...extra,
    );
    return args;
  };

  /**
   * The command line that starts bwrap with `args` for user `userId`: capped, through the launch (its cgroups
   * made and limited first); uncapped, bwrap itself.
   */
  const launch = async (userId: number, args: string[]): Promise<string[]> => {
    if (!capped) return [bwrap, ...args];
    const procs = await cgroups.ensure(userId, SANDBOX_CAPS);
    return [
      '/bin/sh',
      '-c',
      LAUNCH,
      'crm-sandbox',
      ...procs,
      '--',
      rootOf(userId),
      String(uidOf(userId)),
      bwrap,
      ...args,
    ];
  };

  /**
   * Make the home and the sandbox's own passwd/group files. Capped: the user's folder is traversable (mode
   * 0711, root's) and the home belongs to the sandbox uid (an older home is handed over once).
   */
  const prepare = (userId: number): Promise<void> => {
    // One at a time per user: two concurrent commands must not both mount the home.
    const p = (preparing.get(userId) ?? Promise.resolve()).catch(() => {}).then(() => prepareNow(userId));
    preparing.set(userId, p);
    void p.finally(() => preparing.get(userId) === p && preparing.delete(userId)).catch(() => {});
    return p;
  };
  const preparing = new Map<number, Promise<void>>();
  const prepareNow = async (userId: number) => {
    const root = rootOf(userId);
    const home = homeOf(userId);
    await fsp.mkdir(home, { recursive: true, mode: 0o700 });
    await fsp.mkdir(path.join(root, 'etc'), { recursive: true });
    const shell = fs.existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';
    await fsp.writeFile(path.join(root, 'etc', 'passwd'), `user:x:1000:1000:user:${SANDBOX_HOME}:${shell}\n`, {
      mode: 0o644,
    });
    await fsp.writeFile(path.join(root, 'etc', 'group'), 'user:x:1000:\n', { mode: 0o644 });
    if (!capped) return;
    await fsp.chmod(root, 0o711);
    const uid = uidOf(userId);
    if (opts.homeMb) await mountHome(userId, uid);
    if ((await fsp.stat(home)).uid !== uid) await chownTree(home, uid);
  };

  /**
   * The home as its own file system of `homeMb` MiB (capped sandboxes, as root): a sparse `home.img` made once with
   * mkfs.ext4 (its root owned by the sandbox uid, no blocks reserved, a 4 MiB journal), loop-mounted `nosuid,nodev` at
   * the home when not mounted yet. A home made before the images (a folder already holding files) stays a folder.
   * @throws RuntimeUnavailable `container_caps_unavailable` when the image cannot be made or mounted.
   */
  const mountHome = async (userId: number, uid: number) => {
    const home = homeOf(userId);
    if (isMountPoint(home)) return;
    const img = path.join(rootOf(userId), 'home.img');
    if (!fs.existsSync(img) && (await fsp.readdir(home)).length) {
      opts.log?.warn({ user: userId }, 'sandbox home predates home images: its size is not capped by the kernel');
      return;
    }
    await ensureHomeImage(img, opts.homeMb!, uid);
    await mountHomeImage(img, home);
  };

  let checked: Promise<void> | undefined;
  let checkedAt = 0;
  /** Can bwrap make a sandbox (with `--disable-userns`) here? Run through `argv0 …` (the launch when capped). */
  const probe = (argv: string[]) =>
    new Promise<void>((resolve, reject) => {
      execFile(argv[0], argv.slice(1), { timeout: 10_000 }, (err, _out, stderr) => {
        if (!err) return resolve();
        const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
        reject(
          new RuntimeUnavailable(
            missing
              ? 'The process runtime needs bubblewrap (bwrap), which is not installed.'
              : 'The process runtime cannot create sandboxes on this machine (namespaces are not available).',
            String(stderr || err.message).slice(0, 500),
          ),
        );
      });
    });
  const probeArgs = (disableUserns: boolean) => [
    '--unshare-all',
    '--unshare-user',
    ...(disableUserns ? ['--disable-userns'] : []),
    '--cap-drop',
    'ALL',
    '--ro-bind',
    '/',
    '/',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--',
    '/bin/true',
  ];
  /** Why the caps cannot be enforced here (empty: they can). */
  const capsProblems = async (): Promise<string[]> => {
    const problems: string[] = [];
    if (process.getuid?.() !== 0)
      problems.push('the service does not run as root (needed to switch uid and join cgroups)');
    else {
      try {
        await cgroups.check();
      } catch (err) {
        problems.push(`cgroups: ${(err as Error).message}`);
      }
    }
    try {
      await probe([bwrap, ...probeArgs(true)]);
    } catch (err) {
      if ((err as RuntimeUnavailable).detail?.includes('disable-userns'))
        problems.push('bwrap is too old for --disable-userns (0.8.0 or later needed)');
      else throw err;
    }
    return problems;
  };
  const doCheck = async () => {
    const exposed = exposedServicePaths(
      { dataDir: opts.dataDir, checkoutDir: opts.checkoutDir ?? CHECKOUT_ROOT },
      boundHostPaths(),
    );
    if (exposed.length)
      throw new RuntimeUnavailable(
        "Cloud sandboxes would see this server's own files; the operator must move them.",
        exposed.join('; '),
        'container_layout_unsafe',
      );
    const problems = await capsProblems();
    if (problems.length && !opts.allowUncapped)
      throw new RuntimeUnavailable(
        "This server cannot enforce the cloud sandbox's limits (processes, memory, CPU).",
        problems.join('; '),
        'container_caps_unavailable',
      );
    capped = problems.length === 0;
    if (!capped) {
      opts.log?.warn({ problems }, 'cloud sandboxes run WITHOUT process, memory and CPU caps (CLOUD_ALLOW_UNCAPPED)');
      await probe([bwrap, ...probeArgs(!problems.some((p) => p.includes('disable-userns')))]);
      return;
    }
    // The real launch, end to end, once: cgroup join, mount namespace, uid switch, bwrap.
    await fsp.mkdir(path.join(opts.dataDir, 'cloud'), { recursive: true });
    const procs = await cgroups.ensure(0, SANDBOX_CAPS);
    try {
      await probe([
        '/bin/sh',
        '-c',
        LAUNCH,
        'crm-sandbox',
        ...procs,
        '--',
        path.join(opts.dataDir, 'cloud'),
        String(uidBase),
        bwrap,
        ...probeArgs(true),
      ]);
    } finally {
      await cgroups.remove(0);
    }
  };
  const check = (): Promise<void> => {
    // A success is remembered; a failure is tried again after 30 s.
    if (checked && (checkedAt === 0 || Date.now() - checkedAt < 30_000)) return checked;
    checked = doCheck().then(
      () => {
        checkedAt = 0;
      },
      (err) => {
        checkedAt = Date.now();
        throw err;
      },
    );
    return checked;
  };

  /**
   * The sandbox's init (`sleep infinity` under bwrap), named in `init.pid` by its pid and start time: alive when a
   * process of that pid and start time runs (or is stopped). Not by its command line: while the launch execs from
   * one program to the next (sh, unshare, setpriv, bwrap), the kernel shows an empty one for a moment.
   */
  const initAlive = (userId: number): ProcInfo | undefined => {
    let pid: number;
    let start: string | undefined;
    try {
      const [p, s] = fs.readFileSync(initPidFile(userId), 'utf8').trim().split(/\s+/);
      pid = Number(p);
      start = s;
    } catch {
      return undefined;
    }
    if (!Number.isInteger(pid) || pid <= 0) return undefined;
    if (start === undefined)
      // A file written before start times were kept.
      return containerProcesses(userId, opts.dataDir).find(
        (p) => p.pid === pid && p.cmdline.includes('sleep infinity'),
      );
    if (startTimeOf(pid) !== start) return undefined;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      return undefined;
    }
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const info: ProcInfo = { pid, ppid: Number(rest[1]), state: rest[0], cmdline: '' };
    return isExiting(info) ? undefined : info;
  };

  const runtime: ContainerRuntime = {
    kind: 'process',
    check,

    async create(userId) {
      await check();
      await prepare(userId);
      const old = initAlive(userId);
      if (!old) {
        const argv = await launch(userId, sandboxArgs(userId, ['--', 'sleep', 'infinity']));
        const child = spawn(argv[0], argv.slice(1), {
          detached: true,
          stdio: 'ignore',
        });
        await new Promise<void>((resolve, reject) => {
          child.once('spawn', resolve);
          child.once('error', reject);
        }).catch((err: Error) => {
          throw new RuntimeUnavailable('The sandbox could not be started.', err.message);
        });
        child.unref();
        await fsp.writeFile(initPidFile(userId), `${child.pid} ${startTimeOf(child.pid!) ?? ''}\n`);
      }
      return {
        containerId: `proc-u${userId}-${crypto.randomBytes(6).toString('hex')}`,
        serverIp: '127.0.0.1',
        port: null,
        internalPort: null,
      };
    },

    async inspect(_id, userId): Promise<LiveState> {
      const p = initAlive(userId);
      if (!p) return fs.existsSync(homeOf(userId)) ? 'stopped' : 'missing';
      return isStopped(p) ? 'paused' : 'running';
    },

    async pause(_id, userId) {
      // A signal is delivered when its target next runs, so the stop is awaited: SIGSTOP is sent again to
      // whatever is not stopped yet (a process forked meanwhile included) until every live process is
      // stopped, for at most about 2 s. Zombies and exiting processes need no stop.
      for (let i = 0; i < 40; i++) {
        const running = containerProcesses(userId, opts.dataDir).filter((p) => !isStopped(p) && !isExiting(p));
        if (!running.length) return;
        signalAll(running, 'SIGSTOP');
        await new Promise((r) => setTimeout(r, i === 0 ? 5 : 50));
      }
    },

    async resume(_id, userId) {
      signalAll(containerProcesses(userId, opts.dataDir), 'SIGCONT');
    },

    async remove(_id, userId) {
      for (let i = 0; i < 3; i++) {
        const procs = containerProcesses(userId, opts.dataDir);
        if (!procs.length) break;
        signalAll(procs, 'SIGKILL');
        signalAll(procs, 'SIGCONT');
        await new Promise((r) => setTimeout(r, 50));
      }
      // Whatever is left in the user's control group (it holds every process of the sandbox), then the group.
      await cgroups.remove(userId);
      // The home's file system (its loop device is released with it).
      if (isMountPoint(homeOf(userId))) await unmountHome(homeOf(userId));
      // Retried: a sandbox still exiting (or a concurrent request) may write into the tree while it is removed.
      await fsp.rm(rootOf(userId), { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    },

    async exec(_id, userId, argv, o = {}): Promise<ExecResult> {
      await check();
      await prepare(userId);
      const cmd = await launch(userId, sandboxArgs(userId, ['--die-with-parent', '--new-session', '--', ...argv]));
      const child = spawn(cmd[0], cmd.slice(1), {
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
      });
      let output = '';
      const take = (b: Buffer) => {
        output = tailOutput(output + b.toString('utf8'));
      };
      child.stdout.on('data', take);
      child.stderr.on('data', take);
      child.stdin.on('error', () => {});
      child.stdin.end(o.input ?? '');
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          child.kill('SIGKILL');
        }
      }, o.timeoutMs ?? 30_000);
      const code = await new Promise<number | null>((resolve) => {
        child.once('error', (err) => {
          output = err.message;
          resolve(null);
        });
        child.once('close', (c) => resolve(c));
      });
      clearTimeout(timer);
      return { code: timedOut ? null : code, output, timedOut };
    },

    homeBytes: (userId) => dirBytes(homeOf(userId)),

    async shell(_id, userId, size): Promise<ShellSession> {
      await check();
      await prepare(userId);
      const shellBin = fs.existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';
      const inner = (await launch(userId, sandboxArgs(userId, ['--die-with-parent', '--', shellBin, '-i'])))
        .map(quote)
        .join(' ');
      const cols = Math.max(1, Math.min(1000, Math.floor(size.cols)));
      const rows = Math.max(1, Math.min(1000, Math.floor(size.rows)));
      const cmd = `stty rows ${rows} cols ${cols} 2>/dev/null; exec ${inner}`;
      const child = spawn('script', ['-qfec', cmd, '/dev/null'], {
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'xterm-256color' },
      });
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', resolve);
        child.once('error', reject);
      }).catch((err: Error) => {
        throw new RuntimeUnavailable('The terminal needs util-linux script, which could not be started.', err.message);
      });
      child.stdin.on('error', () => {});
      const ptyOf = (): string | undefined => {
        const kid = processes().find((p) => p.ppid === child.pid);
        if (!kid) return undefined;
        try {
          const t = fs.readlinkSync(`/proc/${kid.pid}/fd/0`);
          return /^\/dev\/pts\/\d+$/.test(t) ? t : undefined;
        } catch {
          return undefined;
        }
      };
      const killAll = () => {
        const procs = processes();
        const desc = new Set<number>([child.pid!]);
        let grew = true;
        while (grew) {
          grew = false;
          for (const p of procs)
            if (desc.has(p.ppid) && !desc.has(p.pid)) {
              desc.add(p.pid);
              grew = true;
            }
        }
        for (const pid of desc) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // gone
          }
        }
      };
      return {
        ...orderedInput(
          (d) => {
            if (child.stdin.writable) child.stdin.write(d);
          },
          (c, r) =>
            new Promise<void>((resolve) => {
              const pts = ptyOf();
              if (!pts) return resolve();
              const cc = Math.max(1, Math.min(1000, Math.floor(c)));
              const rr = Math.max(1, Math.min(1000, Math.floor(r)));
              execFile('stty', ['-F', pts, 'rows', String(rr), 'cols', String(cc)], () => resolve());
            }),
        ),
        onData: (fn) => {
          child.stdout.on('data', fn);
          child.stderr.on('data', fn);
        },
        onExit: (fn) => child.once('close', (c) => fn(c)),
        kill: killAll,
      };
    },
  };
  return runtime;
}
