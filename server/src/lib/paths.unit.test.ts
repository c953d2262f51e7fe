import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  isWithin,
  normalizeRelative,
  type PathProblem,
  PathRefused,
  projectPathRefusal,
  resolveInside,
  resolveInsideSync,
} from './paths.ts';

const problemOf = (fn: () => unknown): PathProblem | 'none' => {
  try {
    fn();
    return 'none';
  } catch (err) {
    if (err instanceof PathRefused) return err.problem;
    throw err;
  }
};

describe('normalizeRelative (lexical)', () => {
  it('normalizes relative paths', () => {
    expect(normalizeRelative('')).toBe('');
    expect(normalizeRelative('.')).toBe('');
    expect(normalizeRelative('a/b/')).toBe('a/b');
    expect(normalizeRelative('a//b/./c')).toBe('a/b/c');
    expect(normalizeRelative('a/../b')).toBe('b');
    expect(normalizeRelative('a\\b')).toBe('a/b');
    expect(normalizeRelative('..a/b..')).toBe('..a/b..');
  });
  it('refuses a NUL byte', () => {
    expect(problemOf(() => normalizeRelative('a\0b'))).toBe('nul');
  });
  it('refuses absolute paths: POSIX, drive letters, UNC, backslashes', () => {
    for (const p of ['/etc/passwd', 'C:/x', 'c:x', 'C:\\x', '\\\\server\\share', '\\etc\\passwd'])
      expect(
        problemOf(() => normalizeRelative(p)),
        p,
      ).toBe('absolute');
  });
  it('refuses .. above the root, also with backslashes or after a detour', () => {
    for (const p of ['..', '../x', 'a/../../x', 'a/b/../../..', '..\\x', 'a\\..\\..\\x'])
      expect(
        problemOf(() => normalizeRelative(p)),
        p,
      ).toBe('traversal');
  });
  it('hands the problem to the caller’s refuse function', () => {
    expect(() => normalizeRelative('../x', projectPathRefusal)).toThrowError(
      expect.objectContaining({ statusCode: 403, code: 'path_outside_project' }),
    );
    expect(() => normalizeRelative('a\0', projectPathRefusal)).toThrowError(
      expect.objectContaining({ statusCode: 400, code: 'invalid_path' }),
    );
  });
});

describe('isWithin', () => {
  it('is the root or below it, not a sibling with the same prefix', () => {
    expect(isWithin('/r/p', '/r/p')).toBe(true);
    expect(isWithin('/r/p', '/r/p/a')).toBe(true);
    expect(isWithin('/r/p/', '/r/p/a')).toBe(true);
    expect(isWithin('/r/p', '/r/p2')).toBe(false);
    expect(isWithin('/r/p', '/r')).toBe(false);
  });
});

describe.each([
  ['resolveInside', (root: string, rel: string) => resolveInside(root, rel)],
  ['resolveInsideSync', async (root: string, rel: string) => resolveInsideSync(root, rel)],
])('%s (on disk)', (_name, resolve) => {
  let tmp: string;
  let root: string;
  let outside: string;
  const refused = async (rel: string): Promise<PathProblem | 'none'> => {
    try {
      await resolve(root, rel);
      return 'none';
    } catch (err) {
      if (err instanceof PathRefused) return err.problem;
      throw err;
    }
  };

  beforeAll(() => {
    tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'paths-')));
    root = path.join(tmp, 'root');
    outside = path.join(tmp, 'outside');
    fs.mkdirSync(path.join(root, 'real', 'sub'), { recursive: true });
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(root, 'real', 'in.txt'), 'inside');
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret');
    fs.symlinkSync(outside, path.join(root, 'dir-out'));
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'file-out'));
    fs.symlinkSync(path.join(outside, 'missing.txt'), path.join(root, 'dangling-out'));
    fs.symlinkSync('../outside/missing.txt', path.join(root, 'dangling-out-rel'));
    // A dangling link inside the root whose target goes through a link leading outside.
    fs.symlinkSync('dir-out/missing.txt', path.join(root, 'dangling-via-dir-out'));
    // A chain of dangling links ending outside.
    fs.symlinkSync('chain-2', path.join(root, 'chain-1'));
    fs.symlinkSync(path.join(outside, 'nope', 'x.txt'), path.join(root, 'chain-2'));
    fs.symlinkSync(path.join(root, 'real'), path.join(root, 'dir-in'));
    fs.symlinkSync('real/in.txt', path.join(root, 'file-in'));
    fs.symlinkSync('real/not-yet.txt', path.join(root, 'dangling-in'));
    fs.symlinkSync('loop-b', path.join(root, 'loop-a'));
    fs.symlinkSync('loop-a', path.join(root, 'loop-b'));
  });
  afterAll(() => {
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('resolves plain paths, existing or not', async () => {
    expect(await resolve(root, '')).toEqual({ abs: root, rel: '', real: root });
    expect(await resolve(root, 'real/in.txt')).toEqual({
      abs: path.join(root, 'real', 'in.txt'),
      rel: 'real/in.txt',
      real: path.join(root, 'real', 'in.txt'),
    });
    expect((await resolve(root, 'new/deeper/file.txt')).real).toBe(path.join(root, 'new', 'deeper', 'file.txt'));
    expect((await resolve(root, 'real/in.txt/below')).real).toBe(path.join(root, 'real', 'in.txt', 'below'));
  });

  it('refuses the lexical escapes before touching the disk', async () => {
    expect(await refused('../outside/secret.txt')).toBe('traversal');
    expect(await refused(path.join(outside, 'secret.txt'))).toBe('absolute');
    expect(await refused('real/\0')).toBe('nul');
  });

  it('refuses symbolic links that lead outside, dangling ones included', async () => {
    for (const rel of [
      'dir-out',
      'dir-out/secret.txt',
      'dir-out/new/file.txt',
      'file-out',
      'dangling-out',
      'dangling-out-rel',
      'dangling-via-dir-out',
      'chain-1',
      'chain-1/below',
    ])
      expect(await refused(rel), rel).toBe('symlink');
  });

  it('refuses a symbolic link loop', async () => {
    expect(await refused('loop-a')).toBe('symlink');
    expect(await refused('loop-a/x')).toBe('symlink');
  });

  it('allows symbolic links that stay inside, and tells where they lead', async () => {
    expect(await resolve(root, 'dir-in/in.txt')).toEqual({
      abs: path.join(root, 'dir-in', 'in.txt'),
      rel: 'dir-in/in.txt',
      real: path.join(root, 'real', 'in.txt'),
    });
    expect((await resolve(root, 'file-in')).real).toBe(path.join(root, 'real', 'in.txt'));
    expect((await resolve(root, 'dangling-in')).real).toBe(path.join(root, 'real', 'not-yet.txt'));
    expect((await resolve(root, 'dir-in/sub/new.txt')).real).toBe(path.join(root, 'real', 'sub', 'new.txt'));
  });

  it('compares with the real path of a root reached through a link', async () => {
    const alias = path.join(tmp, 'alias');
    if (!fs.existsSync(alias)) fs.symlinkSync(root, alias);
    expect((await resolve(alias, 'dir-in/in.txt')).real).toBe(path.join(root, 'real', 'in.txt'));
    await expect(resolve(alias, 'dir-out/secret.txt')).rejects.toBeInstanceOf(PathRefused);
  });
});

describe('resolveInside options', () => {
  it('creates a missing root with create, throws ENOENT without', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'paths-root-'));
    try {
      const root = path.join(tmp, 'a', 'b');
      await expect(resolveInside(root, 'x')).rejects.toMatchObject({ code: 'ENOENT' });
      expect(() => resolveInsideSync(root, 'x')).toThrowError(expect.objectContaining({ code: 'ENOENT' }));
      expect((await resolveInside(root, 'x', { create: true })).rel).toBe('x');
      expect(fs.statSync(root).isDirectory()).toBe(true);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
  it('throws the caller’s error', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'paths-refuse-'));
    try {
      fs.symlinkSync(os.tmpdir(), path.join(tmp, 'up'));
      await expect(resolveInside(tmp, 'up/x', { refuse: projectPathRefusal })).rejects.toMatchObject({
        statusCode: 403,
        code: 'path_outside_project',
      });
      const mine = (p: PathProblem) => new Error(`mine: ${p}`);
      expect(() => resolveInsideSync(tmp, 'up/x', { refuse: mine })).toThrowError('mine: symlink');
      expect(() => resolveInsideSync(tmp, '/x', { refuse: mine })).toThrowError('mine: absolute');
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
