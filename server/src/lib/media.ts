/**
 * Audio and video through ffmpeg and ffprobe: probing a file and converting it to what the speech server takes
 * (16 kHz mono 16-bit WAV). Both run as child processes without a shell, read and write files (never the whole
 * media in memory), and stop at their time limit or when the caller's signal aborts.
 *
 * Which binaries (`resolveMediaTools`, docs/configuration.md, Model providers): `FFMPEG_PATH` / `FFPROBE_PATH`
 * when set; else the system's (Debian's `ffmpeg` package, found on the PATH); else the static builds that
 * `npm install` brings (`@ffmpeg-installer/ffmpeg`, `@ffprobe-installer/ffprobe`: the binaries are inside the
 * registry's packages, for Linux, macOS and Windows on x64 and arm64).
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import which from 'which';

/** ffmpeg or ffprobe is not installed where the configuration says. */
export class MediaToolMissing extends Error {
  constructor(readonly tool: string) {
    super(`${tool} is not installed (set FFMPEG_PATH / FFPROBE_PATH, or install the ffmpeg package).`);
    this.name = 'MediaToolMissing';
  }
}

/** ffmpeg or ffprobe failed on this input (not a media file, unsupported codec, cut short…). */
export class MediaError extends Error {
  constructor(
    message: string,
    /** The last lines ffmpeg wrote, for the log only (they may name paths). */
    readonly detail: string,
  ) {
    super(message);
    this.name = 'MediaError';
  }
}

export interface MediaInfo {
  /** Seconds, or null when the container does not say. */
  durationSeconds: number | null;
  hasAudio: boolean;
  hasVideo: boolean;
  /** The container's format names, e.g. `mov,mp4,m4a,3gp,3g2,mj2`. */
  format: string;
}

export interface Media {
  /** Whether ffmpeg and ffprobe can be run (checked once, then remembered). */
  available(): Promise<boolean>;
  /** Streams and duration of a file. @throws MediaToolMissing, MediaError. */
  probe(file: string, opts?: { signal?: AbortSignal }): Promise<MediaInfo>;
  /**
   * Convert the audio of `input` (audio or video) to 16 kHz mono 16-bit PCM WAV at `output`.
   * @throws MediaToolMissing, MediaError (no audio stream, undecodable input, time limit).
   */
  toSpeechWav(input: string, output: string, opts?: { signal?: AbortSignal; timeoutMs?: number }): Promise<void>;
  /**
   * Run ffmpeg with `args` (for other areas' own conversions, e.g. video frames).
   * @returns its stderr. @throws MediaToolMissing, MediaError.
   */
  ffmpeg(args: string[], opts?: { signal?: AbortSignal; timeoutMs?: number }): Promise<string>;
}

/** Where a media tool is taken from: the configuration, the system's PATH, the npm package, or nowhere. */
export type ToolSource = 'configured' | 'system' | 'npm' | 'none';

export interface ToolLocation {
  /** The binary to run (absolute unless configured otherwise; the bare name when nowhere found). */
  path: string;
  source: ToolSource;
}

const requireCjs = createRequire(import.meta.url);

/** The binary an `@ffmpeg-installer` / `@ffprobe-installer` package installed for this platform, if any. */
function npmBinary(pkg: '@ffmpeg-installer/ffmpeg' | '@ffprobe-installer/ffprobe'): string | undefined {
  try {
    // Each throws on a platform it has no build for, or when the optional platform package was not installed.
    return (requireCjs(pkg) as { path: string }).path;
  } catch {
    return undefined;
  }
}

/**
 * Choose the ffmpeg and ffprobe binaries: the configured path (`FFMPEG_PATH`, `FFPROBE_PATH`; ffprobe defaults
 * to the one beside a configured absolute ffmpeg when it exists), else the system's on `PATH`, else the copy
 * `npm install` brought. Nothing is run here; `source: 'none'` means neither was found.
 * @param opts.path the search path (default `process.env.PATH`).
 */
export function resolveMediaTools(opts: { ffmpegPath?: string; ffprobePath?: string; path?: string } = {}): {
  ffmpeg: ToolLocation;
  ffprobe: ToolLocation;
} {
  const onPath = (name: string) =>
    which.sync(name, { nothrow: true, ...(opts.path !== undefined ? { path: opts.path } : {}) }) ?? undefined;
  const find = (name: 'ffmpeg' | 'ffprobe', configured: string | undefined): ToolLocation => {
    if (configured) return { path: configured, source: 'configured' };
    const system = onPath(name);
    if (system) return { path: system, source: 'system' };
    const npm = npmBinary(name === 'ffmpeg' ? '@ffmpeg-installer/ffmpeg' : '@ffprobe-installer/ffprobe');
    if (npm) return { path: npm, source: 'npm' };
    return { path: name, source: 'none' };
  };
  const ffmpeg = find('ffmpeg', opts.ffmpegPath);
  let ffprobeConfigured = opts.ffprobePath;
  if (!ffprobeConfigured && opts.ffmpegPath && path.isAbsolute(opts.ffmpegPath)) {
    const beside = path.join(path.dirname(opts.ffmpegPath), 'ffprobe');
    if (which.sync(beside, { nothrow: true })) ffprobeConfigured = beside;
  }
  return { ffmpeg, ffprobe: find('ffprobe', ffprobeConfigured) };
}

const tail = (s: string, n = 6) => s.trim().split('\n').slice(-n).join('\n');

/**
 * @param opts.ffmpegPath the ffmpeg binary (default `ffmpeg` on the PATH).
 * @param opts.ffprobePath the ffprobe binary (default: beside `ffmpegPath`, else `ffprobe` on the PATH).
 */
export function createMedia(opts: { ffmpegPath?: string; ffprobePath?: string } = {}): Media {
  const ffmpegPath = opts.ffmpegPath ?? 'ffmpeg';
  const ffprobePath =
    opts.ffprobePath ?? (path.isAbsolute(ffmpegPath) ? path.join(path.dirname(ffmpegPath), 'ffprobe') : 'ffprobe');
  let checked: Promise<boolean> | undefined;

  const run = (bin: string, args: string[], o: { signal?: AbortSignal; timeoutMs?: number } = {}) =>
    new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
      execFile(
        bin,
        args,
        { signal: o.signal, timeout: o.timeoutMs ?? 3_600_000, maxBuffer: 16 * 1024 * 1024, windowsHide: true },
        (err, stdout, stderr) => {
          if (!err) return resolve({ stdout, stderr });
          const code = (err as NodeJS.ErrnoException).code;
          if (code === 'ENOENT') return reject(new MediaToolMissing(path.basename(bin)));
          if (o.signal?.aborted) return reject(new MediaError('The conversion was cancelled.', ''));
          if ((err as { killed?: boolean }).killed)
            return reject(new MediaError('The conversion took too long.', tail(String(stderr))));
          reject(new MediaError(`${path.basename(bin)} could not read this media.`, tail(String(stderr))));
        },
      );
    });

  return {
    available() {
      checked ??= Promise.all([run(ffmpegPath, ['-version']), run(ffprobePath, ['-version'])]).then(
        () => true,
        () => false,
      );
      return checked;
    },
    async probe(file, o = {}) {
      const { stdout } = await run(
        ffprobePath,
        ['-v', 'error', '-show_entries', 'format=duration,format_name:stream=codec_type', '-of', 'json', file],
        { ...o, timeoutMs: 60_000 },
      );
      let parsed: { format?: { duration?: string; format_name?: string }; streams?: Array<{ codec_type?: string }> };
      try {
        parsed = JSON.parse(stdout);
      } catch {
        throw new MediaError('ffprobe gave an unreadable answer.', tail(stdout));
      }
      const d = Number(parsed.format?.duration);
      const types = new Set((parsed.streams ?? []).map((s) => s.codec_type));
      return {
        durationSeconds: Number.isFinite(d) ? d : null,
        hasAudio: types.has('audio'),
        hasVideo: types.has('video'),
        format: parsed.format?.format_name ?? '',
      };
    },
    async toSpeechWav(input, output, o = {}) {
      await run(
        ffmpegPath,
        [
          '-nostdin',
          '-hide_banner',
          '-loglevel',
          'error',
          '-y',
          '-i',
          input,
          '-vn',
          '-ac',
          '1',
          '-ar',
          '16000',
          '-c:a',
          'pcm_s16le',
          '-f',
          'wav',
          output,
        ],
        o,
      );
    },
    async ffmpeg(args, o = {}) {
      return (await run(ffmpegPath, ['-nostdin', '-hide_banner', ...args], o)).stderr;
    },
  };
}
