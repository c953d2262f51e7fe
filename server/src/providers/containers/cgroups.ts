/**
 * Kernel caps of the `process` runtime's sandboxes (docs/ARCHITECTURE.md, Cloud containers → Caps): one control
 * group per user's sandbox with a process cap (`pids.max`), a memory cap without extra swap and a CPU quota, on
 * cgroup v1 (a hierarchy per controller under `<root>/<controller>/`) or v2 (the unified hierarchy), detected
 * from `/proc/self/cgroup` and the cgroup filesystem.
 *
 * Where the groups go: on v1, under the service's own group of each controller (`<own>/crm-cloud-<tag>/u<id>`),
 * so the sandboxes count within whatever the service itself is limited to. On v2 a group holding processes
 * cannot hand controllers to children, so the sandboxes' group is a sibling of the service's own
 * (`<parent of own>/crm-cloud-<tag>/u<id>`; the root's own children when the service is in the root group).
 * Creating groups and moving processes into them needs write access to those folders (root, or a delegated
 * subtree); `check` says precisely what is missing.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

/**
 * The caps of one user's sandbox (docs/ARCHITECTURE.md, Cloud containers), shared by its init, terminal and commands.
 */
export interface SandboxCaps {
  /** Processes and threads at most (`pids.max`). */
  pids: number;
  /** Memory at most, bytes, with no swap beyond it. */
  memoryBytes: number;
  /** CPUs' worth of time per period (1.5 = 150 ms every 100 ms). */
  cpus: number;
  /** Size of the sandbox's private `/tmp` (a tmpfs; its pages also count against the memory cap), bytes. */
  tmpBytes: number;
}

/** The caps every sandbox gets: 200 processes, 2 GB, 1.5 CPUs, a 256 MB `/tmp`. */
export const SANDBOX_CAPS: Readonly<SandboxCaps> = Object.freeze({
  pids: 200,
  memoryBytes: 2 * 1024 * 1024 * 1024,
  cpus: 1.5,
  tmpBytes: 256 * 1024 * 1024,
});

/** The CPU period of the quota (µs). */
const CPU_PERIOD_US = 100_000;
const CONTROLLERS = ['pids', 'memory', 'cpu'] as const;
type Controller = (typeof CONTROLLERS)[number];

/** Where the sandboxes' groups are created, as detected. */
export type CgroupLayout =
  | { version: 1; bases: Record<Controller, string> }
  | { version: 2; base: string; parent: string }
  | { version: null; problem: string };

/**
 * Find where per-sandbox groups can be made (pure: reads only the given root and `/proc/self/cgroup` text).
 * @param root the cgroup filesystem's mount point (usually `/sys/fs/cgroup`).
 * @param selfCgroup the text of `/proc/self/cgroup`.
 * @param tag names the service's own group of sandboxes (`crm-cloud-<tag>`).
 * @returns the layout, or `{version:null, problem}` naming what is missing.
 */
export function detectCgroups(root: string, selfCgroup: string, tag: string): CgroupLayout {
  const lines = selfCgroup
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => {
      const [, ctrl, ...rest] = l.split(':');
      return { controllers: ctrl ? ctrl.split(',') : [], path: rest.join(':') || '/' };
    });
  const name = `crm-cloud-${tag}`;
  if (fs.existsSync(path.join(root, 'cgroup.controllers'))) {
    // The unified hierarchy mounted at the root: cgroup v2 only.
    const own = lines.find((l) => l.controllers.length === 0)?.path ?? '/';
    const parent = own === '/' ? '/' : path.posix.dirname(own);
    const parentDir = path.join(root, parent);
    let available: string[] = [];
    try {
      available = fs.readFileSync(path.join(parentDir, 'cgroup.controllers'), 'utf8').trim().split(/\s+/);
    } catch {
      return { version: null, problem: `cgroup v2: ${parentDir} cannot be read` };
    }
    const missing = CONTROLLERS.filter((c) => !available.includes(c));
    if (missing.length)
      return { version: null, problem: `cgroup v2: controllers not available: ${missing.join(', ')}` };
    return { version: 2, base: path.join(parentDir, name), parent: parentDir };
  }
  const bases = {} as Record<Controller, string>;
  const missing: string[] = [];
  for (const c of CONTROLLERS) {
    const line = lines.find((l) => l.controllers.includes(c));
    const mounts = [c, line?.controllers.join(',')].filter((m): m is string => !!m);
    const mount = mounts.map((m) => path.join(root, m)).find((d) => fs.existsSync(path.join(d, 'cgroup.procs')));
    if (!mount) missing.push(c);
    else bases[c] = path.join(mount, line?.path ?? '/', name);
  }
  if (missing.length) return { version: null, problem: `cgroup v1: controllers not mounted: ${missing.join(', ')}` };
  return { version: 1, bases };
}

/** The limit files of a group and their values, in the order they are written. */
export function limitFiles(version: 1 | 2, caps: SandboxCaps): [file: string, value: string, optional: boolean][] {
  const quota = String(Math.round(caps.cpus * CPU_PERIOD_US));
  const mem = String(caps.memoryBytes);
  if (version === 2)
    return [
      ['pids.max', String(caps.pids), false],
      ['memory.max', mem, false],
      ['memory.swap.max', '0', true],
      ['cpu.max', `${quota} ${CPU_PERIOD_US}`, false],
    ];
  return [
    ['pids/pids.max', String(caps.pids), false],
    // memsw must stay ≥ the limit: raised first when a stricter one is already set, written again after.
    ['memory/memory.memsw.limit_in_bytes', mem, true],
    ['memory/memory.limit_in_bytes', mem, false],
    ['memory/memory.memsw.limit_in_bytes', mem, true],
    ['cpu/cpu.cfs_period_us', String(CPU_PERIOD_US), false],
    ['cpu/cpu.cfs_quota_us', quota, false],
  ];
}

const exists = (p: string) => fs.existsSync(p);

/** Per-user sandbox groups over one detected layout. */
export interface SandboxCgroups {
  readonly layout: CgroupLayout;
  /**
   * Make sure groups can be made and limited here: creates, limits and removes a probe group.
   * @throws Error with the reason (a missing controller, no write access).
   */
  check(): Promise<void>;
  /**
   * Create (or re-limit) user `userId`'s group with `caps`.
   * @returns the `cgroup.procs` files a process writes its pid to, to join the group (one per hierarchy).
   */
  ensure(userId: number, caps: SandboxCaps): Promise<string[]>;
  /** The pids in user `userId`'s group (empty when it has none). */
  members(userId: number): number[];
  /** Processes (and threads) counted against the group's `pids.max` now; 0 without a group. */
  pidsCurrent(userId: number): number;
  /** Kill every process of the group and remove it (waits up to about 2 s for them to exit). */
  remove(userId: number): Promise<void>;
}

/**
 * The sandbox groups of a service (its tag: a hash of `DATA_DIR`).
 * @param opts.root the cgroup filesystem (default `/sys/fs/cgroup`); `opts.selfCgroup` the text of
 *   `/proc/self/cgroup` (default: read).
 */
export function createSandboxCgroups(opts: { tag: string; root?: string; selfCgroup?: string }): SandboxCgroups {
  const root = opts.root ?? '/sys/fs/cgroup';
  let self = opts.selfCgroup;
  if (self === undefined) {
    try {
      self = fs.readFileSync('/proc/self/cgroup', 'utf8');
    } catch {
      self = '';
    }
  }
  const layout = detectCgroups(root, self, opts.tag);

  /** The group folders of `name` (one per hierarchy) keyed as in `limitFiles`. */
  const dirsOf = (name: string): Record<string, string> => {
    if (layout.version === 2) return { '': path.join(layout.base, name) };
    if (layout.version === 1)
      return Object.fromEntries(CONTROLLERS.map((c) => [c, path.join(layout.bases[c], name)])) as Record<
        string,
        string
      >;
    return {};
  };
  const fileOf = (dirs: Record<string, string>, rel: string) => {
    if (layout.version === 2) return path.join(dirs[''], rel);
    const [c, f] = rel.split('/');
    return path.join(dirs[c], f);
  };

  const make = async (name: string, caps: SandboxCaps): Promise<string[]> => {
    if (layout.version === null) throw new Error(layout.problem);
    if (layout.version === 2) {
      // Controllers flow down: the parent hands them to our group, our group to the sandboxes.
      const want = '+pids +memory +cpu';
      const enabled = (dir: string) =>
        fs.readFileSync(path.join(dir, 'cgroup.subtree_control'), 'utf8').trim().split(/\s+/);
      if (!CONTROLLERS.every((c) => enabled(layout.parent).includes(c)))
        await fsp.writeFile(path.join(layout.parent, 'cgroup.subtree_control'), want);
      await fsp.mkdir(layout.base, { recursive: true });
      if (!CONTROLLERS.every((c) => enabled(layout.base).includes(c)))
        await fsp.writeFile(path.join(layout.base, 'cgroup.subtree_control'), want);
    }
    const dirs = dirsOf(name);
    for (const d of Object.values(dirs)) await fsp.mkdir(d, { recursive: true });
    for (const [rel, value, optional] of limitFiles(layout.version, caps)) {
      const file = fileOf(dirs, rel);
      if (optional && !exists(file)) continue;
      try {
        await fsp.writeFile(file, value);
      } catch (err) {
        if (!optional) throw err;
      }
    }
    return Object.values(dirs).map((d) => path.join(d, 'cgroup.procs'));
  };

  const membersOf = (name: string): number[] => {
    const dirs = Object.values(dirsOf(name));
    const found = new Set<number>();
    for (const d of dirs) {
      try {
        for (const l of fs.readFileSync(path.join(d, 'cgroup.procs'), 'utf8').split('\n'))
          if (/^\d+$/.test(l)) found.add(Number(l));
      } catch {
        // no such group
      }
    }
    return [...found];
  };

  const drop = async (name: string) => {
    const dirs = Object.values(dirsOf(name));
    for (let i = 0; i < 40; i++) {
      const pids = membersOf(name);
      for (const pid of pids) {
        for (const sig of ['SIGKILL', 'SIGCONT'] as const) {
          try {
            process.kill(pid, sig);
          } catch {
            // gone
          }
        }
      }
      let left = 0;
      for (const d of dirs) {
        if (!exists(d)) continue;
        try {
          await fsp.rmdir(d);
        } catch {
          left++;
        }
      }
      if (!left) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    // The service's own group of sandboxes goes with its last sandbox (it stays while another one is there).
    for (const d of dirs) await fsp.rmdir(path.dirname(d)).catch(() => {});
  };

  return {
    layout,
    async check() {
      if (layout.version === null) throw new Error(layout.problem);
      const probe = `probe-${process.pid}`;
      try {
        const procs = await make(probe, SANDBOX_CAPS);
        for (const p of procs) if (!exists(p)) throw new Error(`${p} was not created`);
      } finally {
        await drop(probe);
      }
    },
    ensure: (userId, caps) => make(`u${userId}`, caps),
    members: (userId) => membersOf(`u${userId}`),
    pidsCurrent(userId) {
      const dirs = dirsOf(`u${userId}`);
      try {
        return Number(
          fs.readFileSync(fileOf(dirs, layout.version === 2 ? 'pids.current' : 'pids/pids.current'), 'utf8'),
        );
      } catch {
        return 0;
      }
    },
    remove: (userId) => drop(`u${userId}`),
  };
}
