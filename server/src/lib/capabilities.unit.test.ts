/**
 * The optional tools: which ffmpeg/ffprobe is taken (configured, system, npm copy), how each tool is reported
 * present or missing with its cost, and the start line's text.
 */
import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createCapabilities, startLine, versionOf } from './capabilities.ts';
import { resolveMediaTools } from './media.ts';

describe('resolveMediaTools', () => {
  it('takes the configured paths first', () => {
    const r = resolveMediaTools({ ffmpegPath: '/opt/ff/ffmpeg', ffprobePath: '/opt/ff/ffprobe', path: '' });
    expect(r.ffmpeg).toEqual({ path: '/opt/ff/ffmpeg', source: 'configured' });
    expect(r.ffprobe).toEqual({ path: '/opt/ff/ffprobe', source: 'configured' });
  });

  it('takes the system binaries from PATH, else the copies npm installed', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ffpath-'));
    try {
      for (const name of ['ffmpeg', 'ffprobe']) fs.writeFileSync(path.join(dir, name), '#!/bin/sh\n', { mode: 0o755 });
      const system = resolveMediaTools({ path: dir });
      expect(system.ffmpeg).toEqual({ path: path.join(dir, 'ffmpeg'), source: 'system' });
      expect(system.ffprobe).toEqual({ path: path.join(dir, 'ffprobe'), source: 'system' });
      // No ffmpeg on the PATH: the static builds of @ffmpeg-installer / @ffprobe-installer (this platform has them).
      const npm = resolveMediaTools({ path: path.join(dir, 'nothing-here') });
      expect(npm.ffmpeg.source).toBe('npm');
      expect(npm.ffmpeg.path).toMatch(/node_modules\/@ffmpeg-installer\/[a-z0-9]+-[a-z0-9]+\/ffmpeg$/);
      expect(npm.ffprobe.source).toBe('npm');
      expect(npm.ffprobe.path).toMatch(/node_modules\/@ffprobe-installer\/[a-z0-9]+-[a-z0-9]+\/ffprobe$/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('capabilities', () => {
  it('reads versions from the tools’ first lines', () => {
    expect(versionOf('ffmpeg version 5.1.6-0+deb12u1 Copyright (c) 2000-2024')).toBe('5.1.6-0+deb12u1');
    expect(versionOf('git version 2.39.5')).toBe('2.39.5');
    expect(versionOf('bubblewrap 0.8.0')).toBe('0.8.0');
    expect(versionOf('2025.01.15')).toBe('2025.01.15');
  });

  it('reports each tool present or missing, with its cost and how to add it', async () => {
    // The static ffmpeg npm installed, given as configured.
    const npmFfmpeg = resolveMediaTools({ path: '/nonexistent' }).ffmpeg.path;
    const caps = createCapabilities({
      config: { containerRuntime: 'docker', notes: { ytDlpPath: '/nonexistent/yt-dlp' } as never },
      media: { ffmpeg: { path: npmFfmpeg, source: 'configured' }, ffprobe: { path: 'ffprobe', source: 'none' } },
      dockerPing: () => Promise.reject(new Error('connect ENOENT /var/run/docker.sock')),
    });
    const list = await caps.list();
    expect(list.map((c) => c.name)).toEqual(['ffmpeg', 'ffprobe', 'bubblewrap', 'git', 'yt-dlp', 'docker']);
    const by = Object.fromEntries(list.map((c) => [c.name, c]));
    expect(by.ffmpeg).toMatchObject({ present: true, source: 'configured' });
    expect(by.ffmpeg.version).toMatch(/^N-|^\d/);
    expect(by.ffprobe).toMatchObject({ present: false });
    expect(by.ffprobe.cost).toContain('503 ffmpeg_unavailable');
    expect(by['yt-dlp']).toMatchObject({ present: false });
    expect(by['yt-dlp'].add).toContain('YTDLP_PATH');
    expect(by.docker).toMatchObject({ present: false });
    expect(by.docker.cost).toContain('container_runtime_unavailable');
    // Under the docker runtime bubblewrap costs nothing.
    expect(by.bubblewrap.cost).toMatch(/^nothing while CONTAINER_RUNTIME=docker/);
    // Kept for a minute: the same answer again.
    expect(await caps.list()).toBe(list);
  });

  it('counts bubblewrap as missing under the process runtime when it cannot make a sandbox', async () => {
    const caps = createCapabilities({
      config: { containerRuntime: 'process', notes: { ytDlpPath: 'yt-dlp' } as never },
      media: { ffmpeg: { path: 'ffmpeg', source: 'none' }, ffprobe: { path: 'ffprobe', source: 'none' } },
      sandboxCheck: () => Promise.reject(new Error('no namespaces')),
      dockerPing: () => Promise.resolve(),
    });
    const by = Object.fromEntries((await caps.list()).map((c) => [c.name, c]));
    expect(by.bubblewrap.present).toBe(false);
    expect(by.bubblewrap.cost).toContain('503 container_runtime_unavailable');
    expect(by.docker.present).toBe(true);
    expect(by.docker.cost).toMatch(/^nothing while CONTAINER_RUNTIME=process/);
  });

  it('the start line names the address, the database and every tool', () => {
    const line = startLine({
      url: 'http://127.0.0.1:8080',
      database: 'embedded PostgreSQL (PGlite, pgvector) in /srv/data/pgdata',
      version: '1.2.3',
      capabilities: [
        { name: 'ffmpeg', present: true, source: 'npm', version: '4.1', cost: 'c', add: 'a' },
        { name: 'git', present: true, source: 'system', version: '2.39.5', cost: 'c', add: 'a' },
        { name: 'yt-dlp', present: false, cost: 'YouTube sources end in error', add: 'apt-get install yt-dlp' },
      ],
    });
    expect(line).toBe(
      'CRM service 1.2.3 ready: open http://127.0.0.1:8080 | database: embedded PostgreSQL (PGlite, pgvector) in /srv/data/pgdata' +
        ' | ffmpeg: yes 4.1, from npm | git: yes 2.39.5 | yt-dlp: MISSING, YouTube sources end in error; to add: apt-get install yt-dlp',
    );
  });
});
