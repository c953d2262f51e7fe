/**
 * The container runtime of the cloud area: where a user's cloud container lives. Two real implementations,
 * chosen by `CONTAINER_RUNTIME`:
 *  - `process` (default, embedded): a per-user sandboxed shell on the host under bubblewrap (process-runtime.ts);
 *  - `docker`: a container through the Docker Engine API (docker-runtime.ts);
 * and `none`, which refuses every operation with `RuntimeUnavailable`.
 * A runtime that cannot start (no bwrap, no namespaces, no Docker engine) throws `RuntimeUnavailable`, which the
 * service answers as 503 `container_runtime_unavailable`.
 */

/**
 * The runtime cannot run containers here (missing tool or engine, no namespaces), or cannot run them safely:
 * `code` says which (`container_runtime_unavailable`; `container_caps_unavailable` when the kernel caps cannot
 * be enforced; `container_layout_unsafe` when the service's own files would be visible inside).
 */
export class RuntimeUnavailable extends Error {
  constructor(
    message: string,
    /** Why, for the log only (may name paths or addresses). */
    readonly detail = '',
    readonly code:
      | 'container_runtime_unavailable'
      | 'container_caps_unavailable'
      | 'container_layout_unsafe' = 'container_runtime_unavailable',
  ) {
    super(message);
    this.name = 'RuntimeUnavailable';
  }
}

/** A container's state as the runtime sees it. */
export type LiveState = 'running' | 'paused' | 'stopped' | 'missing';

export interface CreatedContainer {
  /** The runtime's id of the container (Docker id, or `proc-u<userId>-<random>`). */
  containerId: string;
  /** Address of the host that runs it, and the container's shell port there (null when it has none). */
  serverIp: string;
  port: number | null;
  internalPort: number | null;
}

/** The outcome of a command run inside a container. */
export interface ExecResult {
  /** Exit code (null when killed by the time limit). */
  code: number | null;
  /** stdout and stderr interleaved, cut to the last 64 KB. */
  output: string;
  timedOut: boolean;
}

/** An interactive shell (a pty) inside a container. */
export interface ShellSession {
  /** Send keystrokes / bytes to the shell's stdin. */
  write(data: string | Buffer): void;
  /** Change the terminal's size (columns, rows). */
  resize(cols: number, rows: number): void;
  /** Output (stdout and stderr of the pty) as it comes. */
  onData(fn: (chunk: Buffer) => void): void;
  /** The shell ended. */
  onExit(fn: (code: number | null) => void): void;
  /** End the shell and everything it started. */
  kill(): void;
}

export interface ContainerRuntime {
  readonly kind: 'process' | 'docker' | 'none';
  /** Whether containers can run here. @throws RuntimeUnavailable with the reason. */
  check(): Promise<void>;
  /** Create and start user `userId`'s container (isolated, capped). @throws RuntimeUnavailable. */
  create(userId: number): Promise<CreatedContainer>;
  /** The container's live state (`missing` when the runtime no longer knows it). */
  inspect(containerId: string, userId: number): Promise<LiveState>;
  /** Freeze every process of the container. */
  pause(containerId: string, userId: number): Promise<void>;
  /** Unfreeze it. */
  resume(containerId: string, userId: number): Promise<void>;
  /** Stop and remove the container, its isolated network and (process runtime) its home. Idempotent. */
  remove(containerId: string, userId: number): Promise<void>;
  /**
   * Run `argv` inside the container (in the user's home, never through a shell on the host), with a time
   * limit (default 30 s). @param opts.input written to the command's stdin, then closed.
   */
  exec(
    containerId: string,
    userId: number,
    argv: string[],
    opts?: { timeoutMs?: number; input?: string },
  ): Promise<ExecResult>;
  /** Open an interactive shell (a pty) inside the container. */
  shell(containerId: string, userId: number, size: { cols: number; rows: number }): Promise<ShellSession>;
  /** Bytes the user's home holds (storage quotas); absent when the runtime keeps homes elsewhere (an engine's volume). */
  homeBytes?(userId: number): Promise<number>;
}

/**
 * A shell's input and resizes in the order the client sent them: a resize is asynchronous in both runtimes (a `stty`
 * child, an Engine API call), so input that follows one waits until it is applied; a command typed right after a
 * resize then sees the new size. `writeNow` writes at once; `applyResize` resolves when the size is applied (it must
 * not reject). @returns the session's `write` and `resize`.
 */
export function orderedInput(
  writeNow: (data: string | Buffer) => void,
  applyResize: (cols: number, rows: number) => Promise<void>,
): Pick<ShellSession, 'write' | 'resize'> {
  let resizing: Promise<void> | undefined;
  return {
    write(data) {
      if (resizing) void resizing.then(() => writeNow(data));
      else writeNow(data);
    },
    resize(cols, rows) {
      const done = (resizing ?? Promise.resolve()).then(() => applyResize(cols, rows));
      resizing = done;
      void done.then(() => {
        if (resizing === done) resizing = undefined;
      });
    },
  };
}

/** Keep the last `max` bytes of an output. */
export function tailOutput(s: string, max = 64 * 1024): string {
  return s.length > max ? s.slice(s.length - max) : s;
}

/** The runtime that refuses: `CONTAINER_RUNTIME=none`. */
export function createNoRuntime(): ContainerRuntime {
  const no = async (): Promise<never> => {
    throw new RuntimeUnavailable('Cloud containers are turned off on this server.');
  };
  return {
    kind: 'none',
    check: no,
    create: no,
    inspect: async () => 'missing',
    pause: no,
    resume: no,
    remove: async () => {},
    exec: no,
    shell: no,
  };
}
