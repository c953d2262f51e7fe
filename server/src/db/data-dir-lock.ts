/**
 * The embedded database belongs to one process: before PGlite opens `DATA_DIR/pgdata`, the process takes
 * `DATA_DIR/pgdata.lock`, a file holding its pid (and, on Linux, the pid's start time, so a pid reused by
 * another program after a crash is not mistaken for the owner).
 *
 * - Taking it is exclusive: the file is written under a temporary name and hard-linked into place, which
 *   fails when the lock exists, so of two processes starting at once exactly one wins.
 * - A lock whose owner is gone (a crash, a kill -9) is stale and taken over. Removing it happens under a
 *   second exclusive file (`pgdata.lock.takeover`) after reading it again, so two processes recovering the
 *   same stale lock cannot both remove it and both win.
 * - Released on close, and on exit when the process ends without closing.
 *
 * Libraries such as proper-lockfile judge staleness by the lock's age and do not record a pid, so they can
 * neither tell which process holds it nor take over at once after a crash.
 */
import fs from 'node:fs';
import path from 'node:path';

/** The embedded database's data directory is held by another live process. */
export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `DATA_DIR ${dataDir} is in use by another process (pid ${pid}): the embedded database belongs to one process; stop that one or use another DATA_DIR`,
    );
  }
}

interface Owner {
  pid: number;
  /** Start time of the process in clock ticks since boot (Linux), when known. */
  start?: number;
}

/** A takeover file older than this was left by a process that died during the few statements it guards. */
const TAKEOVER_STALE_MS = 10_000;

/** Start time of a process (field 22 of /proc/<pid>/stat) or undefined where /proc is not available. */
function startTicks(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: count fields after its closing one.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const v = Number(fields[19]);
    return Number.isFinite(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the process that wrote `owner` is still running. */
function alive(owner: Owner): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (owner.start === undefined) return true;
  const now = startTicks(owner.pid);
  return now === undefined || now === owner.start;
}

function readOwner(file: string): Owner | undefined {
  try {
    const o = JSON.parse(fs.readFileSync(file, 'utf8')) as Owner;
    return Number.isInteger(o.pid) && o.pid > 0 ? o : { pid: 0 };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return { pid: 0 }; // unreadable or not ours: no live owner can be named
  }
}

export interface DataDirLock {
  /** The lock file. */
  readonly file: string;
  /** Remove the lock if this process still holds it. Idempotent. */
  release(): void;
}

/**
 * Take the embedded database's lock in `dataDir`.
 * @throws DataDirLockedError when a live process holds it; file-system errors otherwise.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, 'pgdata.lock');
  const takeover = `${file}.takeover`;
  const me: Owner = { pid: process.pid, start: startTicks(process.pid) };
  const body = JSON.stringify(me);
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, body, { mode: 0o644 });
  try {
    for (let attempt = 0; ; attempt++) {
      if (attempt > 50) throw new Error(`could not take ${file}: it keeps changing`);
      try {
        fs.linkSync(tmp, file);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const owner = readOwner(file);
      if (!owner) continue; // removed meanwhile: try again
      if (owner.pid === process.pid && owner.start === me.start && me.start !== undefined)
        throw new Error(`${file} is already held by this process: open the embedded database once`);
      if (owner.pid !== process.pid && owner.pid !== 0 && alive(owner))
        throw new DataDirLockedError(dataDir, owner.pid);
      removeStale(file, takeover, owner);
    }
  } finally {
    fs.rmSync(tmp, { force: true });
  }

  let held = true;
  const release = () => {
    if (!held) return;
    held = false;
    process.removeListener('exit', release);
    // Remove only our own lock (a stale-lock recovery elsewhere may have replaced it after a long pause).
    if (readOwner(file)?.pid === process.pid) fs.rmSync(file, { force: true });
  };
  process.on('exit', release);
  return { file, release };
}

/** Remove a stale lock written by `seen`, under the takeover file, if it is still the same one. */
function removeStale(file: string, takeover: string, seen: Owner): void {
  try {
    fs.writeFileSync(takeover, String(process.pid), { flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    // Another process is recovering the lock right now; a takeover file that old is from one that died.
    try {
      if (Date.now() - fs.statSync(takeover).mtimeMs > TAKEOVER_STALE_MS) fs.rmSync(takeover, { force: true });
    } catch {
      /* gone meanwhile */
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    return;
  }
  try {
    const now = readOwner(file);
    if (now && now.pid === seen.pid && now.start === seen.start) fs.rmSync(file, { force: true });
  } finally {
    fs.rmSync(takeover, { force: true });
  }
}
