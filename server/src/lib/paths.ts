/**
 * Keeping a path inside a root directory (docs/ARCHITECTURE.md, Issues, skills, wiki, files, pins, learnings): the one
 * rule behind the files area, pins, wiki page paths, the agent's file tools, the public docs and the memory loader.
 * Each caller turns a refusal into its own error (`refuse`, or catching `PathRefused`).
 *
 * Two steps:
 *  1. lexical (`normalizeRelative`): a NUL byte, an absolute path (POSIX, drive letter, UNC; backslashes count
 *     as separators) or `..` climbing above the root is refused;
 *  2. on disk (`resolveInside`, `resolveInsideSync`): where the path really leads must be the root or inside it
 *     (compared with the root's real path). Where it leads is the real path of the path itself when it exists,
 *     else of its nearest existing ancestor plus the rest; a dangling symbolic link on the way is followed to
 *     where its target would be, so a link to a file that does not exist yet cannot be used to write outside.
 *     A symbolic link loop is refused too.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { BadRequest, Forbidden } from '../http/errors.ts';

/**
 * Why a path was refused: a NUL byte, an absolute path, `..` above the root, or (on disk) a symbolic link leading
 * outside.
 */
export type PathProblem = 'nul' | 'absolute' | 'traversal' | 'symlink';

/** The refusal thrown when no `refuse` function is given. */
export class PathRefused extends Error {
  constructor(readonly problem: PathProblem) {
    super(`path refused: ${problem}`);
    this.name = 'PathRefused';
  }
}

/** Turns a refusal into the caller's error. */
export type Refuse = (problem: PathProblem) => Error;

const defaultRefuse: Refuse = (problem) => new PathRefused(problem);

/**
 * The errors of project paths (docs/ARCHITECTURE.md, Issues, skills, wiki, files, pins, learnings): 400 `invalid_path`
 * for a NUL byte, 403 `path_outside_project` for anything leaving the project directory. Used by files, pins and the
 * wiki.
 */
export const projectPathRefusal: Refuse = (problem) =>
  problem === 'nul'
    ? new BadRequest('invalid_path', 'The path contains a NUL character.')
    : new Forbidden('The path leaves the project directory.', 'path_outside_project');

/** Whether absolute path `p` is `root` or inside it (both already resolved the same way). */
export function isWithin(root: string, p: string): boolean {
  return p === root || p.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
}

/**
 * Lexical checks only (step 1).
 * @returns the normalized relative path with `/` separators, '' for the root itself.
 * @throws `refuse('nul' | 'absolute' | 'traversal')` (default: PathRefused).
 */
export function normalizeRelative(rel: string, refuse: Refuse = defaultRefuse): string {
  if (rel.includes('\0')) throw refuse('nul');
  const p = rel.replace(/\\/g, '/');
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p) || path.isAbsolute(rel)) throw refuse('absolute');
  const norm = path.posix.normalize(p === '' ? '.' : p);
  if (norm === '..' || norm.startsWith('../')) throw refuse('traversal');
  return norm === '.' ? '' : norm.replace(/\/+$/, '');
}

/** A resolved path inside a root. */
export interface InsidePath {
  /** `root` joined with `rel` (a final symbolic link is not followed). */
  abs: string;
  /** The normalized relative path ('' for the root). */
  rel: string;
  /** Where `abs` really leads (symbolic links followed, dangling ones included); inside the root's real path. */
  real: string;
}

/** Symbolic links followed through missing targets before giving up (the kernel's own limit is 40). */
const MAX_HOPS = 40;
const errno = (err: unknown) => (err as NodeJS.ErrnoException).code;

/** Where `p` really leads, whether or not it exists. @throws `refuse('symlink')` on a loop. */
async function locate(p: string, refuse: Refuse, hops = 0): Promise<string> {
  try {
    return await fsp.realpath(p);
  } catch (err) {
    if (errno(err) === 'ELOOP') throw refuse('symlink');
    if (errno(err) !== 'ENOENT' && errno(err) !== 'ENOTDIR') throw err;
  }
  const parent = path.dirname(p);
  if (parent === p) return p;
  const link = await fsp.readlink(p).catch(() => undefined);
  const base = await locate(parent, refuse, hops);
  if (link === undefined) return path.join(base, path.basename(p));
  if (hops >= MAX_HOPS) throw refuse('symlink');
  return locate(path.resolve(base, link), refuse, hops + 1);
}

/** `locate`, synchronously. */
function locateSync(p: string, refuse: Refuse, hops = 0): string {
  try {
    return fs.realpathSync(p);
  } catch (err) {
    if (errno(err) === 'ELOOP') throw refuse('symlink');
    if (errno(err) !== 'ENOENT' && errno(err) !== 'ENOTDIR') throw err;
  }
  const parent = path.dirname(p);
  if (parent === p) return p;
  let link: string | undefined;
  try {
    link = fs.readlinkSync(p);
  } catch {
    link = undefined;
  }
  const base = locateSync(parent, refuse, hops);
  if (link === undefined) return path.join(base, path.basename(p));
  if (hops >= MAX_HOPS) throw refuse('symlink');
  return locateSync(path.resolve(base, link), refuse, hops + 1);
}

/**
 * Resolve `rel` inside `root` (both steps).
 * @param opts.create create `root` when missing (else a missing root throws ENOENT).
 * @param opts.refuse the caller's error for a refusal (default: PathRefused).
 * @returns `{abs, rel, real}` (see InsidePath).
 * @throws `refuse(problem)` for a NUL byte, an absolute path, `..` above the root, or a path whose real
 *   location (symbolic links followed, dangling ones included) is outside the root; file system errors other
 *   than a missing path as they are.
 */
export async function resolveInside(
  root: string,
  rel: string,
  opts: { create?: boolean; refuse?: Refuse } = {},
): Promise<InsidePath> {
  const refuse = opts.refuse ?? defaultRefuse;
  const norm = normalizeRelative(rel, refuse);
  if (opts.create) await fsp.mkdir(root, { recursive: true });
  const realRoot = await fsp.realpath(root);
  const abs = norm ? path.join(root, norm) : root;
  const real = await locate(abs, refuse);
  if (!isWithin(realRoot, real)) throw refuse('symlink');
  return { abs, rel: norm, real };
}

/** `resolveInside` for synchronous callers (no `create`); same checks, same errors. */
export function resolveInsideSync(root: string, rel: string, opts: { refuse?: Refuse } = {}): InsidePath {
  const refuse = opts.refuse ?? defaultRefuse;
  const norm = normalizeRelative(rel, refuse);
  const realRoot = fs.realpathSync(root);
  const abs = norm ? path.join(root, norm) : root;
  const real = locateSync(abs, refuse);
  if (!isWithin(realRoot, real)) throw refuse('symlink');
  return { abs, rel: norm, real };
}
