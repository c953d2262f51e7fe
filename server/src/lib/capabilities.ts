/**
 * The optional tools of this machine (docs/operations.md, Optional capabilities): ffmpeg and ffprobe (audio and
 * video), bubblewrap (the cloud containers' sandboxes), git (repository clones), yt-dlp (YouTube audio) and a
 * Docker engine (`CONTAINER_RUNTIME=docker`). The service starts without any of them; what each one's absence
 * costs is reported once in the start line and always in `GET /readyz` (`capabilities`).
 *
 * A tool is present when it runs (`<tool> --version` answers within a few seconds); bubblewrap under the process
 * runtime is present only when it can really make a sandbox here (user namespaces allowed), and Docker when its
 * engine answers a ping. Results are kept for a minute, so a tool installed while the service runs shows up.
 */
import { execFile } from 'node:child_process';
import type { Config } from '../config.ts';
import type { ToolLocation } from './media.ts';

export type CapabilityName = 'ffmpeg' | 'ffprobe' | 'bubblewrap' | 'git' | 'yt-dlp' | 'docker';

/** One optional tool as found on this machine. */
export interface Capability {
  name: CapabilityName;
  present: boolean;
  /** Where the binary comes from: the configuration, the system, or the copy `npm install` brought. */
  source?: 'configured' | 'system' | 'npm';
  /** The version it reports, when present. */
  version?: string;
  /** What does not work without it (also said when present but unused, e.g. Docker under the process runtime). */
  cost: string;
  /** How to add it. */
  add: string;
}

export interface Capabilities {
  /** Every optional tool in a fixed order; checked at most once a minute. Never throws. */
  list(): Promise<Capability[]>;
  /**
   * The result of the last check that has finished, without waiting (undefined until the first one has): for
   * `GET /readyz`, which must not wait for the tools. Starts a new check when the last one is over a minute old.
   */
  known(): Capability[] | undefined;
}

/** How long a check result is kept (ms). */
const KEEP_MS = 60_000;
/** Time limit of one `--version` or engine ping (ms). */
const PROBE_MS = 5_000;

/** The first line a command prints for `args`, or undefined when it cannot run (missing, failing, too slow). */
function firstLine(bin: string, args: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(bin, args, { timeout: PROBE_MS, maxBuffer: 1024 * 1024, windowsHide: true }, (err, stdout) => {
      if (err) return resolve(undefined);
      resolve(String(stdout).trim().split('\n')[0]?.trim() ?? '');
    });
  });
}

/** `ffmpeg version 5.1.6-0+deb12u1 Copyright…` → `5.1.6-0+deb12u1`; `git version 2.39.5` → `2.39.5`. */
export function versionOf(line: string): string {
  const m = /\bversion\s+(\S+)/i.exec(line) ?? /(\d+[\w.+-]*)/.exec(line);
  return (m ? m[1] : line).slice(0, 60);
}

const within = <T>(p: Promise<T>, ms: number): Promise<T> =>
  Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms).unref())]);

/**
 * @param deps.media where ffmpeg and ffprobe are (`resolveMediaTools`).
 * @param deps.sandboxCheck the process runtime's own sandbox test (`ContainerRuntime.check`), when that runtime
 *   is configured; otherwise bubblewrap is only asked its version.
 * @param deps.dockerPing a ping of the Docker engine at `DOCKER_HOST` (or the default socket).
 */
export function createCapabilities(deps: {
  config: Pick<Config, 'containerRuntime' | 'notes'>;
  media: { ffmpeg: ToolLocation; ffprobe: ToolLocation };
  sandboxCheck?: () => Promise<void>;
  dockerPing: () => Promise<void>;
}): Capabilities {
  const runtime = deps.config.containerRuntime;
  const ffmpegAdd =
    'apt-get install ffmpeg (or set FFMPEG_PATH / FFPROBE_PATH); npm install brings a static copy on Linux, macOS and Windows (x64, arm64)';
  const mediaCost =
    'meeting transcript uploads answer 503 ffmpeg_unavailable; audio and video note sources end in error, and recordings above SPEECH_MAX_FILE_BYTES cannot be cut for the speech server';

  const tool = async (
    name: CapabilityName,
    loc: ToolLocation,
    args: string[],
    cost: string,
    add: string,
  ): Promise<Capability> => {
    const line = loc.source === 'none' ? undefined : await firstLine(loc.path, args);
    return line === undefined
      ? { name, present: false, cost, add }
      : {
          name,
          present: true,
          source: loc.source === 'none' ? undefined : loc.source,
          version: versionOf(line),
          cost,
          add,
        };
  };

  const bubblewrap = async (): Promise<Capability> => {
    const add =
      'apt-get install bubblewrap, with unprivileged user namespaces allowed (sysctl kernel.unprivileged_userns_clone=1; in a container: --security-opt seccomp=unconfined or a privileged one), or use CONTAINER_RUNTIME=docker';
    const cost =
      runtime === 'process'
        ? 'cloud containers (terminal, commands, SSH keys) answer 503 container_runtime_unavailable'
        : `nothing while CONTAINER_RUNTIME=${runtime} (it makes the sandboxes of CONTAINER_RUNTIME=process)`;
    const line = await firstLine('bwrap', ['--version']);
    if (line === undefined) return { name: 'bubblewrap', present: false, cost, add };
    if (deps.sandboxCheck) {
      const ok = await within(deps.sandboxCheck(), PROBE_MS * 2).then(
        () => true,
        () => false,
      );
      if (!ok)
        return {
          name: 'bubblewrap',
          present: false,
          version: versionOf(line),
          cost: `${cost} (bwrap is installed, but cannot make a sandbox here: user namespaces are not allowed)`,
          add,
        };
    }
    return { name: 'bubblewrap', present: true, source: 'system', version: versionOf(line), cost, add };
  };

  const docker = async (): Promise<Capability> => {
    const cost =
      runtime === 'docker'
        ? 'cloud containers answer 503 container_runtime_unavailable'
        : `nothing while CONTAINER_RUNTIME=${runtime} (with Docker, cloud containers get CPU, memory and network limits)`;
    const add = 'install Docker Engine, then CONTAINER_RUNTIME=docker (DOCKER_HOST names a remote engine)';
    const ok = await within(deps.dockerPing(), PROBE_MS).then(
      () => true,
      () => false,
    );
    return ok ? { name: 'docker', present: true, cost, add } : { name: 'docker', present: false, cost, add };
  };

  const check = () =>
    Promise.all([
      tool('ffmpeg', deps.media.ffmpeg, ['-version'], mediaCost, ffmpegAdd),
      tool('ffprobe', deps.media.ffprobe, ['-version'], mediaCost, ffmpegAdd),
      bubblewrap(),
      tool(
        'git',
        { path: 'git', source: 'system' },
        ['--version'],
        'cloning a repository into a project (POST …/files/clone) fails',
        'apt-get install git',
      ),
      tool(
        'yt-dlp',
        {
          path: deps.config.notes.ytDlpPath,
          source: deps.config.notes.ytDlpPath === 'yt-dlp' ? 'system' : 'configured',
        },
        ['--version'],
        'YouTube note sources without captions (and no YOUTUBE_TRANSCRIPT_API_URL) end in error',
        'apt-get install yt-dlp or pipx install yt-dlp (or set YTDLP_PATH)',
      ),
      docker(),
    ]);

  let last: { at: number; result: Promise<Capability[]> } | undefined;
  let finished: Capability[] | undefined;
  const list = () => {
    if (!last || Date.now() - last.at > KEEP_MS) {
      const result = check();
      last = { at: Date.now(), result };
      void result.then((r) => {
        if (last?.result === result) finished = r;
      });
    }
    return last.result;
  };
  return {
    list,
    known() {
      void list();
      return finished;
    },
  };
}

/**
 * The start line's text (docs/operations.md, The first start): where to open the service, the database, then
 * each optional tool present (with its version and source) or missing (with what that costs and how to add it).
 */
export function startLine(opts: {
  url: string;
  database: string;
  version: string;
  capabilities: Capability[];
}): string {
  const parts = opts.capabilities.map((c) => {
    if (!c.present) return `${c.name}: MISSING, ${c.cost}; to add: ${c.add}`;
    const from = c.source === 'npm' ? ', from npm' : c.source === 'configured' ? ', configured' : '';
    return `${c.name}: yes${c.version ? ` ${c.version}` : ''}${from}`;
  });
  return [`CRM service ${opts.version} ready: open ${opts.url}`, `database: ${opts.database}`, ...parts].join(' | ');
}
