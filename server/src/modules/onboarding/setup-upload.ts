/**
 * Reading the multipart body of POST /onboarding/setup: the `config` field and any number of `files`,
 * saved under safe names in a private temporary directory (removed by `cleanup`).
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import crypto from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import type { FastifyRequest } from 'fastify';
import { BadRequest, PayloadTooLarge } from '../../http/errors.ts';

/** A safe file name: the last path segment, only `[A-Za-z0-9._-]`, no leading dots, at most 120 characters. */
export function safeFileName(name: string): string | undefined {
  const base = name.split(/[\\/]/).pop() ?? '';
  const clean = base
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/^[._]+/, '')
    .slice(0, 120);
  return clean && /[A-Za-z0-9]/.test(clean) ? clean : undefined;
}

export async function readSetupUpload(req: FastifyRequest, tmpRoot: string) {
  const dir = path.join(tmpRoot, `setup-${crypto.randomBytes(8).toString('hex')}`);
  const files: Array<{ name: string; tmpPath: string }> = [];
  let config: string | undefined;
  const cleanup = () => fsp.rm(dir, { recursive: true, force: true });
  try {
    for await (const part of req.parts()) {
      if (part.type === 'field') {
        if (part.fieldname === 'config') config = String(part.value);
        continue;
      }
      if (part.fieldname !== 'files' && part.fieldname !== 'file') {
        part.file.resume();
        continue;
      }
      const name = safeFileName(part.filename ?? '');
      if (!name) throw new BadRequest('invalid_file_name', 'An uploaded file has no usable name.');
      await fsp.mkdir(dir, { recursive: true });
      const tmpPath = path.join(dir, `${files.length}-${name}`);
      await pipeline(part.file, fs.createWriteStream(tmpPath));
      if (part.file.truncated) throw new PayloadTooLarge('An uploaded file is larger than 100 MB.');
      files.push({ name, tmpPath });
    }
  } catch (err) {
    await cleanup();
    throw err;
  }
  return { config, files, cleanup };
}
