/**
 * Audio and video through ffmpeg and ffprobe: probing a file and converting it to what the speech server takes
 * (16 kHz mono 16-bit WAV). Both run as child processes without a shell, read and write files (never the whole
 * media in memory), and stop at their time limit or when the caller's signal aborts.
 *
 * Which binaries (`resolveMediaTools`, docs/configuration.md, Model providers): `FFMPEG_PATH` / `FFPROBE_PATH`
 * when set; else the system's (Debian's `ffmpeg` package, found on the PATH); else the static builds that
 * `npm install` brings (`@ffmpeg-installer/ffmpeg`, `@ffprobe-installer/ffprobe`: the binaries are inside the
 * registry's packages, for Linux, macOS and Windows on x64 and arm64).
 *
 * An uploaded file is never left to ffmpeg's format detection: a playlist (HLS, concat, …) named `a.mp3` would
 * make ffmpeg read whatever files or URLs it lists. Every input is read with the demuxer its magic bytes name
 * among the accepted containers (`sniffContainer`), forced with `-f`, through the `file` protocol only
 * (`-protocol_whitelist file`, the path given as `file:<absolute path>`); anything else is refused with a
 * `MediaError` before ffmpeg runs. Playlist and concat demuxers are never among them.
 */
import { execFile } from 'node:child_process';
import fsp from 'node:fs/promises';
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

/** The containers accepted for audio and video, as the names of ffmpeg's demuxers. */
export type Container = 'wav' | 'avi' | 'ogg' | 'flac' | 'matroska' | 'mov' | 'mp3' | 'aac';

/** Atom types an MP4/QuickTime file starts with (after the 4-byte size). */
const MOV_ATOMS = new Set(['ftyp', 'moov', 'mdat', 'free', 'skip', 'wide', 'pnot']);

/**
 * The container of a media file from its first bytes (at least 12; an ID3 tag already skipped by the caller):
 * WAV and AVI (RIFF), Ogg (ogg, oga, opus), FLAC, Matroska (mkv, webm), MP4/QuickTime (mp4, m4a, m4v, mov),
 * MP3 (an ID3 tag or an MPEG audio frame) and AAC (ADTS). @returns null for anything else (playlists, text,
 * other formats).
 */
export function sniffContainer(head: Uint8Array): Container | null {
  const ascii = (from: number, to: number) => String.fromCharCode(...head.subarray(from, to));
  if (head.length < 12) return null;
  if (ascii(0, 4) === 'RIFF') {
    if (ascii(8, 12) === 'WAVE') return 'wav';
    if (ascii(8, 12) === 'AVI ') return 'avi';
    return null;
  }
  if (ascii(0, 4) === 'OggS') return 'ogg';
  if (ascii(0, 4) === 'fLaC') return 'flac';
  if (head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3) return 'matroska';
  if (MOV_ATOMS.has(ascii(4, 8))) return 'mov';
  if (ascii(0, 3) === 'ID3') return 'mp3';
  if (head[0] === 0xff && (head[1] & 0xf6) === 0xf0) return 'aac';
  // An MPEG audio frame: 11 sync bits, then version, layer, bit rate and sample rate none of them reserved.
  if (
    head[0] === 0xff &&
    (head[1] & 0xe0) === 0xe0 &&
    (head[1] & 0x18) !== 0x08 &&
    (head[1] & 0x06) !== 0 &&
    (head[2] & 0xf0) !== 0xf0 &&
    (head[2] & 0x0c) !== 0x0c
  )
    return 'mp3';
  return null;
}

/**
 * The container of the file at `file` (sniffContainer), looking past a leading ID3 tag (an MP3, or AAC or FLAC
 * with a tag). @returns null when it is none of the accepted ones. @throws the file system's errors.
 */
export async function sniffFile(file: string): Promise<Container | null> {
  const fh = await fsp.open(file, 'r');
  try {
    const head = Buffer.alloc(16);
    const { bytesRead } = await fh.read(head, 0, 16, 0);
    const first = sniffContainer(head.subarray(0, bytesRead));
    if (first !== 'mp3' || head.toString('latin1', 0, 3) !== 'ID3') return first;
    // ID3v2: a 10-byte header (+10 with a footer) and a size in four 7-bit bytes.
    const size = ((head[6] & 0x7f) << 21) | ((head[7] & 0x7f) << 14) | ((head[8] & 0x7f) << 7) | (head[9] & 0x7f);
    const after = Buffer.alloc(16);
    const r = await fh.read(after, 0, 16, 10 + size + (head[5] & 0x10 ? 10 : 0));
    const next = sniffContainer(after.subarray(0, r.bytesRead));
    return next === 'aac' || next === 'flac' ? next : 'mp3';
  } finally {
    await fh.close();
  }
}

/**
 * How ffmpeg and ffprobe read a media file: `options` force its sniffed demuxer and the `file` protocol only,
 * `url` is the `file:` URL of its absolute path. @throws MediaError when the file is not an accepted container.
 */
async function inputOf(file: string): Promise<{ options: string[]; url: string }> {
  const container = await sniffFile(file).catch(() => null);
  if (!container) throw new MediaError('The file is not an accepted audio or video format.', '');
  return { options: ['-f', container, '-protocol_whitelist', 'file'], url: `file:${path.resolve(file)}` };
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
  /**
   * Streams and duration of a file (read with its sniffed demuxer, see the module comment).
   * @throws MediaToolMissing, MediaError (not an accepted container, undecodable).
   */
  probe(file: string, opts?: { signal?: AbortSignal }): Promise<MediaInfo>;
  /**
   * Convert the audio of `input` (audio or video) to 16 kHz mono 16-bit PCM WAV at `output`.
   * @throws MediaToolMissing, MediaError (not an accepted container, no audio stream, undecodable input, time limit).
   */
  toSpeechWav(input: string, output: string, opts?: { signal?: AbortSignal; timeoutMs?: number }): Promise<void>;
  /**
   * Run ffmpeg on the one file `input` (read with its sniffed demuxer, see the module comment) with the output
   * options `args` (for other areas' own conversions, e.g. video frames or speech pieces); global options such as
   * `-loglevel` and `-y` may stand among them.
   * @returns its stderr. @throws MediaToolMissing, MediaError (not an accepted container, undecodable).
   */
  ffmpeg(input: string, args: string[], opts?: { signal?: AbortSignal; timeoutMs?: number }): Promise<string>;
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
      const input = await inputOf(file);
      const { stdout } = await run(
        ffprobePath,
        [
          '-v',
          'error',
          '-show_entries',
          'format=duration,format_name:stream=codec_type',
          '-of',
          'json',
          ...input.options,
          input.url,
        ],
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
    async toSpeechWav(file, output, o = {}) {
      const input = await inputOf(file);
      await run(
        ffmpegPath,
        [
          '-nostdin',
          '-hide_banner',
          '-loglevel',
          'error',
          '-y',
          ...input.options,
          '-i',
          input.url,
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
    async ffmpeg(file, args, o = {}) {
      const input = await inputOf(file);
      return (await run(ffmpegPath, ['-nostdin', '-hide_banner', ...input.options, '-i', input.url, ...args], o))
        .stderr;
    },
  };
}
