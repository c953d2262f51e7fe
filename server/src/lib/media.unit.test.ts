import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sniffContainer, sniffFile } from './media.ts';

const bytes = (...parts: Array<string | number[]>) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));

describe('the container of a media file comes from its magic bytes', () => {
  it('names the accepted containers and nothing else', () => {
    expect(sniffContainer(bytes('RIFF', [1, 2, 3, 4], 'WAVEfmt '))).toBe('wav');
    expect(sniffContainer(bytes('RIFF', [1, 2, 3, 4], 'AVI LIST'))).toBe('avi');
    expect(sniffContainer(bytes('OggS', [0, 2, 0, 0, 0, 0, 0, 0]))).toBe('ogg');
    expect(sniffContainer(bytes('fLaC', [0, 0, 0, 34, 0, 0, 0, 0]))).toBe('flac');
    expect(sniffContainer(bytes([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81, 1, 0x42, 0xf7, 0x81]))).toBe(
      'matroska',
    );
    expect(sniffContainer(bytes([0, 0, 0, 0x20], 'ftypisom', [0, 0]))).toBe('mov');
    expect(sniffContainer(bytes([0, 0, 0, 0x08], 'wide', [0, 0, 0, 0]))).toBe('mov');
    expect(sniffContainer(bytes('ID3', [4, 0, 0, 0, 0, 0, 0, 0, 0, 0]))).toBe('mp3');
    expect(sniffContainer(bytes([0xff, 0xfb, 0x90, 0x64, 0, 0, 0, 0, 0, 0, 0, 0]))).toBe('mp3');
    expect(sniffContainer(bytes([0xff, 0xf1, 0x50, 0x80, 0, 0, 0, 0, 0, 0, 0, 0]))).toBe('aac');
    // Playlists, concat lists, SDP, text, other RIFF, short files: none.
    for (const text of [
      '#EXTM3U\n#EXTINF:1,\n/etc/x.wav\n',
      'ffconcat version 1.0\nfile /x.wav\n',
      'v=0\no=- 0 0 IN IP4 127.0.0.1\n',
      '[playlist]\nFile1=/x.wav\n',
      '<?xml version="1.0"?><MPD>',
      'RIFF\0\0\0\0WEBPVP8 ',
      'RIFF',
    ])
      expect(sniffContainer(bytes(text)), text).toBeNull();
    expect(sniffContainer(bytes([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0]))).toBeNull();
  });

  it('looks past an ID3 tag for AAC and FLAC', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sniff-'));
    try {
      const tag = bytes('ID3', [4, 0, 0, 0, 0, 0, 20], Buffer.alloc(20) as unknown as number[]);
      const write = (name: string, b: Buffer) => {
        fs.writeFileSync(path.join(dir, name), b);
        return path.join(dir, name);
      };
      expect(
        await sniffFile(
          write(
            'a.aac',
            Buffer.concat([tag, bytes([0xff, 0xf1, 0x50, 0x80], Buffer.alloc(12) as unknown as number[])]),
          ),
        ),
      ).toBe('aac');
      expect(
        await sniffFile(write('a.flac', Buffer.concat([tag, bytes('fLaC', Buffer.alloc(12) as unknown as number[])]))),
      ).toBe('flac');
      expect(
        await sniffFile(
          write(
            'a.mp3',
            Buffer.concat([tag, bytes([0xff, 0xfb, 0x90, 0x64], Buffer.alloc(12) as unknown as number[])]),
          ),
        ),
      ).toBe('mp3');
      expect(await sniffFile(write('p.mp3', bytes('#EXTM3U\n#EXTINF:1,\n/x.wav\n')))).toBeNull();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
