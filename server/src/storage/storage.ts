/**
 * File blobs under `DATA_DIR` behind one interface (state lives in the database and in DATA_DIR, never only in
 * process memory).
 * Keys are relative slash paths (`avatars/12.png`); `..`, absolute paths and NUL bytes are refused.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { atomicWrite } from '../lib/atomic-write.ts';

export interface BlobStorage {
  /** Absolute root of the blob area. */
  readonly root: string;
  put(key: string, data: Buffer | string): Promise<void>;
  /** Stream into the key; the file appears whole or not at all. @returns bytes written. */
  putStream(key: string, src: Readable): Promise<number>;
  get(key: string): Promise<Buffer | undefined>;
  stream(key: string): fs.ReadStream | undefined;
  exists(key: string): Promise<boolean>;
  delete(key: string): Promise<void>;
  /** Absolute path of a key (for tools such as ffmpeg that need a file). */
  pathOf(key: string): string;
}

export function createBlobStorage(dataDir: string): BlobStorage {
  const root = path.join(dataDir, 'blobs');
  const pathOf = (key: string) => {
    if (!key || key.includes('\0') || path.isAbsolute(key) || key.split(/[\\/]/).includes('..'))
      throw new Error(`invalid blob key`);
    return path.join(root, key);
  };
  return {
    root,
    pathOf,
    async put(key, data) {
      await atomicWrite(pathOf(key), data);
    },
    async putStream(key, src) {
      const p = pathOf(key);
      await fsp.mkdir(path.dirname(p), { recursive: true });
      const tmp = `${p}.${process.pid}.${Date.now()}.tmp`;
      let bytes = 0;
      src.on('data', (c: Buffer) => (bytes += c.length));
      try {
        await pipeline(src, fs.createWriteStream(tmp));
        await fsp.rename(tmp, p);
      } catch (err) {
        await fsp.rm(tmp, { force: true });
        throw err;
      }
      return bytes;
    },
    async get(key) {
      try {
        return await fsp.readFile(pathOf(key));
      } catch {
        return undefined;
      }
    },
    stream(key) {
      const p = pathOf(key);
      return fs.existsSync(p) ? fs.createReadStream(p) : undefined;
    },
    async exists(key) {
      return fs.existsSync(pathOf(key));
    },
    async delete(key) {
      await fsp.rm(pathOf(key), { force: true });
    },
  };
}
