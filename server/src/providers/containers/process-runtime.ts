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
 * Limits of this runtime (the Docker one has them): no CPU, memory or process caps, and no network.
 */
import { execFile, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import {
  type ContainerRuntime,
  type ExecResult,
  type LiveState,
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
}

/**
 * The marker every process of user `userId`'s container carries: the user and a tag of the service's data
 * directory, so two services on one host (or two test runs) never take each other's processes for their own.
 */
export const markerOf = (userId: number, dataDir: string) =>
  `crm-cloud-${crypto.createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 10)}-u${userId}`;

/** A shell-quoted word (single quotes). */
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export interface ProcInfo {
  pid: number;
  ppid: number;
  state: string;
  cmdline: string;
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

/** The `process` runtime over `opts.dataDir`. */
export function createProcessRuntime(opts: ProcessRuntimeOptions): ContainerRuntime {
  const bwrap = opts.bwrapPath ?? 'bwrap';
  const rootOf = (userId: number) => path.join(opts.dataDir, 'cloud', `u${userId}`);
  const homeOf = (userId: number) => path.join(rootOf(userId), 'home');
  const initPidFile = (userId: number) => path.join(rootOf(userId), 'init.pid');

  /** The bwrap arguments of user `userId`'s sandbox. */
  const sandboxArgs = (userId: number, extra: string[]): string[] => {
    const root = rootOf(userId);
    const args = [
      '--unshare-all',
      '--unshare-user',
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
      path.join(root, 'etc', 'passwd'),
      '/etc/passwd',
      '--ro-bind',
      path.join(root, 'etc', 'group'),
      '/etc/group',
      '--proc',
      '/proc',
      '--dev',
      '/dev',
      '--tmpfs',
      '/tmp',
      '--bind',
      homeOf(userId),
      SANDBOX_HOME,
      '--chdir',
      SANDBOX_HOME,
      ...extra,
    );
    return args;
  };

  /** Make the home and the sandbox's own passwd/group files. */
  const prepare = async (userId: number) => {
    const root = rootOf(userId);
    await fsp.mkdir(homeOf(userId), { recursive: true, mode: 0o700 });
    await fsp.mkdir(path.join(root, 'etc'), { recursive: true });
    const shell = fs.existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';
    await fsp.writeFile(path.join(root, 'etc', 'passwd'), `user:x:1000:1000:user:${SANDBOX_HOME}:${shell}\n`);
    await fsp.writeFile(path.join(root, 'etc', 'group'), 'user:x:1000:\n');
  };

  let checked: Promise<void> | undefined;
  let checkedAt = 0;
  const check = (): Promise<void> => {
    // A success is remembered; a failure is tried again after 30 s.
    if (checked && (checkedAt === 0 || Date.now() - checkedAt < 30_000)) return checked;
    checked = new Promise<void>((resolve, reject) => {
      execFile(
        bwrap,
        [
          '--unshare-all',
          '--unshare-user',
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
        ],
        { timeout: 10_000 },
        (err, _out, stderr) => {
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
        },
      );
    }).then(
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

  const initAlive = (userId: number): ProcInfo | undefined => {
    let pid: number;
    try {
      pid = Number(fs.readFileSync(initPidFile(userId), 'utf8').trim());
    } catch {
      return undefined;
    }
    if (!Number.isInteger(pid) || pid <= 0) return undefined;
    return containerProcesses(userId, opts.dataDir).find((p) => p.pid === pid && p.cmdline.includes('sleep infinity'));
  };

  const runtime: ContainerRuntime = {
    kind: 'process',
    check,

    async create(userId) {
      await check();
      await prepare(userId);
      const old = initAlive(userId);
      if (!old) {
        const child = spawn(bwrap, sandboxArgs(userId, ['--', 'sleep', 'infinity']), {
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
        await fsp.writeFile(initPidFile(userId), `${child.pid}\n`);
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
      // Retried: a sandbox still exiting (or a concurrent request) may write into the tree while it is removed.
      await fsp.rm(rootOf(userId), { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    },

    async exec(_id, userId, argv, o = {}): Promise<ExecResult> {
      await check();
      await prepare(userId);
      const child = spawn(bwrap, sandboxArgs(userId, ['--die-with-parent', '--new-session', '--', ...argv]), {
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

    async shell(_id, userId, size): Promise<ShellSession> {
      await check();
      await prepare(userId);
      const shellBin = fs.existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';
      const inner = sandboxArgs(userId, ['--die-with-parent', '--', shellBin, '-i']).map(quote).join(' ');
      const cols = Math.max(1, Math.min(1000, Math.floor(size.cols)));
      const rows = Math.max(1, Math.min(1000, Math.floor(size.rows)));
      const cmd = `stty rows ${rows} cols ${cols} 2>/dev/null; exec ${quote(bwrap)} ${inner}`;
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
        write: (d) => {
          if (child.stdin.writable) child.stdin.write(d);
        },
        resize: (c, r) => {
          const pts = ptyOf();
          if (!pts) return;
          const cc = Math.max(1, Math.min(1000, Math.floor(c)));
          const rr = Math.max(1, Math.min(1000, Math.floor(r)));
          execFile('stty', ['-F', pts, 'rows', String(rr), 'cols', String(cc)], () => {});
        },
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
