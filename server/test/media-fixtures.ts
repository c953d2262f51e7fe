/**
 * Test media generated with the system's ffmpeg: a spoken-length tone as WAV, and a video with scene changes
 * (concatenated solid colours) with an audio track.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ffmpeg = (args: string[]) =>
  execFileSync(process.env.FFMPEG_PATH || 'ffmpeg', ['-nostdin', '-hide_banner', '-loglevel', 'error', '-y', ...args]);

/** A mono 16-bit WAV tone of `seconds` at `file`. */
export function makeWav(file: string, seconds = 3): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  ffmpeg(['-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`, '-ac', '1', '-ar', '22050', file]);
  return file;
}

/**
 * An MP4 of `colors.length` solid-colour scenes of `sceneSeconds` each (so `colors.length - 1` scene changes),
 * 320x240, with a tone as its audio track.
 */
export function makeSceneVideo(file: string, colors = ['red', 'blue', 'green'], sceneSeconds = 2): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const inputs = colors.flatMap((c) => ['-f', 'lavfi', '-i', `color=c=${c}:s=320x240:r=10:d=${sceneSeconds}`]);
  const total = colors.length * sceneSeconds;
  const concat = `${colors.map((_, i) => `[${i}:v]`).join('')}concat=n=${colors.length}:v=1:a=0[v]`;
  ffmpeg([
    ...inputs,
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=330:duration=${total}`,
    '-filter_complex',
    concat,
    '-map',
    '[v]',
    '-map',
    `${colors.length}:a`,
    '-c:v',
    'mpeg4',
    '-q:v',
    '5',
    '-c:a',
    'aac',
    '-shortest',
    file,
  ]);
  return file;
}
