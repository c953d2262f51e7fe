/**
 * Paths inside a project's working directory (specification, Files; Errors 403 "path traversal").
 * Every user-supplied path is resolved against the project directory and refused with 403
 * `path_outside_project` when it is absolute, climbs out with `..`, or reaches outside through a
 * symbolic link (the nearest existing ancestor is resolved with `fs.realpath`).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import crypto from 'node:crypto';
import { BadRequest, Forbidden } from '../../http/errors.ts';

export const outside = () => new Forbidden('The path leaves the project directory.', 'path_outside_project');

/** Lexical checks only: rejects NUL, absolute paths (POSIX, drive letters, UNC) and `..` escapes. @returns the normalized relative path ('' for the root). */
export function normalizeRelative(rel: string): string {
  if (rel.includes('\0')) throw new BadRequest('invalid_path', 'The path contains a NUL character.');
  const p = rel.replace(/\\/g, '/');
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p) || path.isAbsolute(rel)) throw outside();
  const norm = path.posix.normalize(p === '' ? '.' : p);
  if (norm === '..' || norm.startsWith('../')) throw outside();
  return norm === '.' ? '' : norm.replace(/\/+$/, '');
}

async function realpathOrUndefined(p: string): Promise<string | undefined> {
  try {
    return await fs.realpath(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR')
      return undefined;
    throw err;
  }
}

const within = (root: string, p: string) =>
  p === root || p.startsWith(root.endsWith(path.sep) ? root : root + path.sep);

/**
 * Resolve `rel` inside `root` (created when missing).
 * @returns `{abs, rel}`: the absolute path (not following a final symlink) and the normalized relative path.
 * @throws Forbidden `path_outside_project` (403) for traversal, absolute paths or symlinks that leave the root;
 *   BadRequest `invalid_path` for a NUL byte.
 */
export async function resolveInside(root: string, rel: string): Promise<{ abs: string; rel: string }> {
  const norm = normalizeRelative(rel);
  await fs.mkdir(root, { recursive: true });
  const realRoot = await fs.realpath(root);
  const abs = norm ? path.join(root, norm) : root;
  // Resolve the nearest existing ancestor (the path itself when it exists, following symlinks).
  let probe = abs;
  for (;;) {
    const real = await realpathOrUndefined(probe);
    if (real !== undefined) {
      if (!within(realRoot, real)) throw outside();
      break;
    }
    // A dangling symlink: its target is missing, but where does it point?
    const link = await fs.readlink(probe).catch(() => undefined);
    if (link !== undefined && !within(realRoot, path.resolve(path.dirname(probe), link))) throw outside();
    const parent = path.dirname(probe);
    if (parent === probe) throw outside();
    probe = parent;
  }
  return { abs, rel: norm };
}

/** Write a file atomically (temporary sibling, then rename), creating parent directories. */
export async function atomicWrite(file: string, data: string | Buffer): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${crypto.randomBytes(6).toString('hex')}.tmp`);
  try {
    await fs.writeFile(tmp, data);
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
}
