/**
 * Files of a project's working directory (docs/ARCHITECTURE.md, Issues, skills, wiki, files, pins, learnings). Paths
 * come as `?path=` or `{path}`; an upload is multipart `file` parts and an optional `path` field (the folder). Every
 * path goes through `resolveInside` (lib/paths.ts): traversal, absolute paths and symlinks that leave the project
 * directory answer 403 `path_outside_project`; a NUL byte 400 `invalid_path`.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import crypto from 'node:crypto';
import net from 'node:net';
import { execFile } from 'node:child_process';
import { pipeline } from 'node:stream/promises';
import type { Multipart } from '@fastify/multipart';
import type { Actor } from '../../http/auth.ts';
import type { Access } from '../../access/access.ts';
import { BadRequest, Conflict, NotFound, PayloadTooLarge, Upstream } from '../../http/errors.ts';
import { atomicWrite } from '../../lib/atomic-write.ts';
import { projectPathRefusal, resolveInside } from '../../lib/paths.ts';
import { FetchFailed, FetchRefused, resolveOutbound } from '../../lib/safe-fetch.ts';
import type { CodehostService } from '../codehost/codehost.service.ts';
import type { StorageQuota } from '../usage/usage.storage.ts';
import { dirBytes } from '../../lib/dir-bytes.ts';

/** The default upload limit of a project file: 100 MB (docs/api.md, Uploads). */
export const UPLOAD_LIMIT_BYTES = 100 * 1024 * 1024;
/** `git clone` time limit (Limits: clone timeout 60). */
export const CLONE_TIMEOUT_MS = 60_000;
/** Largest file `read` returns inside JSON; bigger files are read with `raw`. */
export const READ_JSON_LIMIT_BYTES = 5 * 1024 * 1024;

export interface FilesOptions {
  uploadLimitBytes: number;
  cloneTimeoutMs: number;
  /** `OUTBOUND_ALLOW_PRIVATE`: non-public hosts, addresses and ranges a clone may still reach. */
  allow: readonly string[];
}

export interface Entry {
  name: string;
  path: string;
  type: 'file' | 'dir' | 'symlink' | 'other';
  size: number;
  modified_at: Date;
}

const code = (err: unknown) => (err as NodeJS.ErrnoException).code;
const notFound = () => new NotFound('No file or folder has this path.', 'path_not_found');
/**
 * A write that met something else at its path (a folder where a file goes, a file where a folder goes — also
 * when another request made it in between the check and the write) as 409 `already_exists`; other errors as they are.
 */
const clash = (err: unknown) =>
  ['EEXIST', 'EISDIR', 'ENOTDIR', 'ENOTEMPTY'].includes(code(err) ?? '')
    ? new Conflict('already_exists', 'Something else already exists at this path or one of its folders.')
    : err;

/**
 * A clone URL: http(s) only (no git://, file://, ssh, ext::), no options smuggled as a URL, its host resolving to
 * public addresses only (lib/safe-fetch.ts, as note sources; `allow` = `OUTBOUND_ALLOW_PRIVATE`).
 * @returns the URL and the checked addresses to pin git's connection to (`host:port:addresses` for
 *   `http.curloptResolve`; null for an IP literal or an allowed host name).
 * @throws BadRequest `invalid_url` (form or scheme), `url_not_allowed` (a non-public address; decided before any
 *   connection, so it tells nothing about what listens there); Upstream 502 `clone_failed` when the name does
 *   not resolve.
 */
export async function checkCloneUrl(url: string, allow: readonly string[]): Promise<{ url: URL; pin: string | null }> {
  if (url.startsWith('-') || /\s/.test(url))
    throw new BadRequest('invalid_url', 'Only http:// and https:// repository URLs can be cloned.');
  try {
    const r = await resolveOutbound(url, allow, { credentials: true });
    if (!r.url.hostname) throw new FetchRefused('no host');
    const bracket = (a: string) => (a.includes(':') ? `[${a}]` : a);
    const pin =
      r.addresses.length && !net.isIP(r.url.hostname.replace(/^\[|\]$/g, ''))
        ? `${r.url.hostname}:${r.port}:${r.addresses.map(bracket).join(',')}`
        : null;
    return { url: r.url, pin };
  } catch (err) {
    if (err instanceof FetchFailed) throw cloneFailed();
    if (err instanceof FetchRefused && /private|loopback|reserved/.test(err.message))
      throw new BadRequest(
        'url_not_allowed',
        'This repository address is not allowed: it is private, loopback, link-local or reserved.',
      );
    throw new BadRequest('invalid_url', 'Only http:// and https:// repository URLs can be cloned.');
  }
}

/** The one answer of a clone git could not make: nothing of git's output (it could map the network). */
const cloneFailed = () => new Upstream(502, 'clone_failed', 'git could not clone the repository.');

/** A path of the project directory (created when missing). @throws 403 `path_outside_project`, 400 `invalid_path`. */
const inProject = (dir: string, p: string) => resolveInside(dir, p, { create: true, refuse: projectPathRefusal });

export function createFilesService(deps: {
  access: Access;
  /** The caller's code host token for clone URLs on the code host (private repositories). */
  codehost?: Pick<CodehostService, 'cloneCredential'>;
  /**
   * The storage quota of the project's owner and the disk floor, asked before every write (usage.storage.ts):
   * 413 `storage_quota_exceeded`, 507 `insufficient_storage`.
   */
  quota: Pick<StorageQuota, 'reserve' | 'changed'>;
  options: FilesOptions;
}) {
  const { quota } = deps;
  const { options } = deps;

  async function statOr404(abs: string) {
    try {
      return await fsp.lstat(abs);
    } catch (err) {
      if (code(err) === 'ENOENT' || code(err) === 'ENOTDIR') throw notFound();
      throw err;
    }
  }

  const entryType = (st: fs.Stats): Entry['type'] =>
    st.isSymbolicLink() ? 'symlink' : st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other';

  return {
    /** Bytes one uploaded file may have (FILES_UPLOAD_LIMIT_BYTES, default 100 MB). */
    uploadLimitBytes: options.uploadLimitBytes,
    /** `{path, entries}` of a folder: folders first, then by name. @throws NotFound; BadRequest `not_a_directory`. */
    async list(actor: Actor, name: string, p = ''): Promise<{ path: string; entries: Entry[] }> {
      const project = await deps.access.project(actor, name);
      const { abs, rel } = await inProject(project.dir, p);
      const st = await fsp.stat(abs).catch((err) => {
        // ENOTDIR: a folder of the path is a file, so nothing is there.
        throw code(err) === 'ENOENT' || code(err) === 'ENOTDIR' ? notFound() : err;
      });
      if (!st.isDirectory()) throw new BadRequest('not_a_directory', 'This path is a file; read it instead.');
      const dirents = await fsp.readdir(abs, { withFileTypes: true });
      const entries: Entry[] = [];
      for (const d of dirents) {
        const st2 = await fsp.lstat(path.join(abs, d.name)).catch(() => undefined);
        if (!st2) continue;
        entries.push({
          name: d.name,
          path: rel ? `${rel}/${d.name}` : d.name,
          type: entryType(st2),
          size: st2.isFile() ? st2.size : 0,
          modified_at: st2.mtime,
        });
      }
      entries.sort((a, b) =>
        (a.type === 'dir') !== (b.type === 'dir') ? (a.type === 'dir' ? -1 : 1) : a.name.localeCompare(b.name),
      );
      return { path: rel, entries };
    },

    /**
     * Read a file: as JSON `{path, content, encoding ('utf8' | 'base64'), size, modified_at}` (at most 5 MB),
     * or with `raw` the bytes as a stream. @throws NotFound; BadRequest `is_directory`; PayloadTooLarge
     * `file_too_large`.
     */
    async read(actor: Actor, name: string, p: string, raw: boolean) {
      const project = await deps.access.project(actor, name);
      const { abs, rel } = await inProject(project.dir, p);
      const st = await fsp.stat(abs).catch((err) => {
        // ENOTDIR: a folder of the path is a file, so nothing is there.
        throw code(err) === 'ENOENT' || code(err) === 'ENOTDIR' ? notFound() : err;
      });
      if (st.isDirectory()) throw new BadRequest('is_directory', 'This path is a folder; list it instead.');
      if (raw)
        return { raw: true as const, stream: fs.createReadStream(abs), size: st.size, filename: path.basename(abs) };
      if (st.size > READ_JSON_LIMIT_BYTES)
        throw new PayloadTooLarge('The file is larger than 5 MB; read it with raw=1.', 'file_too_large', {
          size: st.size,
        });
      const buf = await fsp.readFile(abs);
      const text = buf.toString('utf8');
      const binary = buf.includes(0) || !Buffer.from(text, 'utf8').equals(buf);
      return {
        raw: false as const,
        body: {
          path: rel,
          content: binary ? buf.toString('base64') : text,
          encoding: binary ? 'base64' : 'utf8',
          size: st.size,
          modified_at: st.mtime,
        },
      };
    },

    /** Write a text file (created with its folders, replaced atomically). @throws BadRequest `is_directory`. */
    async save(actor: Actor, name: string, body: { path: string; content: string }) {
      const project = await deps.access.project(actor, name);
      const { abs, rel } = await inProject(project.dir, body.path);
      if (!rel) throw new BadRequest('is_directory', 'The project folder itself cannot be written.');
      const st = await fsp.stat(abs).catch(() => undefined);
      if (st?.isDirectory()) throw new BadRequest('is_directory', 'This path is a folder.');
      // A replaced file frees its old bytes: only the growth is charged.
      await quota.reserve(project.owner_id, Math.max(0, Buffer.byteLength(body.content) - (st?.size ?? 0)));
      await atomicWrite(abs, body.content).catch((err) => {
        throw clash(err);
      });
      return { ok: true, path: rel, size: Buffer.byteLength(body.content) };
    },

    /** Create a folder (and missing parents). @throws Conflict `already_exists`. */
    async mkdir(actor: Actor, name: string, p: string) {
      const project = await deps.access.project(actor, name);
      const { abs, rel } = await inProject(project.dir, p);
      if (!rel || (await fsp.lstat(abs).catch(() => undefined)))
        throw new Conflict('already_exists', 'Something already exists at this path.');
      await quota.reserve(project.owner_id, 0);
      await fsp.mkdir(abs, { recursive: true }).catch((err) => {
        throw clash(err);
      });
      return { ok: true, path: rel };
    },

    /** Create an empty file (and missing folders). @throws Conflict `already_exists`. */
    async create(actor: Actor, name: string, p: string) {
      const project = await deps.access.project(actor, name);
      const { abs, rel } = await inProject(project.dir, p);
      if (!rel) throw new Conflict('already_exists', 'Something already exists at this path.');
      await quota.reserve(project.owner_id, 0);
      try {
        await fsp.mkdir(path.dirname(abs), { recursive: true });
        await fsp.writeFile(abs, '', { flag: 'wx' });
      } catch (err) {
        if (code(err) === 'EEXIST') throw new Conflict('already_exists', 'Something already exists at this path.');
        throw clash(err);
      }
      return { ok: true, path: rel };
    },

    /** Delete a file, symlink or folder (recursively). @throws NotFound; BadRequest `cannot_delete_root`. */
    async remove(actor: Actor, name: string, p: string) {
      const project = await deps.access.project(actor, name);
      const { abs, rel } = await inProject(project.dir, p);
      if (!rel) throw new BadRequest('cannot_delete_root', 'The project folder itself cannot be deleted.');
      await statOr404(abs);
      await fsp.rm(abs, { recursive: true, force: true });
      await quota.changed(project.owner_id);
      return { ok: true, path: rel };
    },

    /**
     * Multipart upload: `file` parts (any number) and an optional field `path` (the target folder, default
     * the root). Each file is streamed to a temporary file in the project, then moved into place; an upload
     * over the limit answers 413 and leaves nothing behind. The owner's storage quota and the disk floor are checked
     * before the first byte and for each file once received (413 `storage_quota_exceeded` with `used_bytes` and
     * `quota_bytes`, 507 `insufficient_storage`); a refused upload leaves nothing behind.
     */
    async upload(actor: Actor, name: string, parts: AsyncIterableIterator<Multipart>) {
      const project = await deps.access.project(actor, name);
      await quota.reserve(project.owner_id, 0);
      const tmpDir = path.join(project.dir, '.crm', `upload-${crypto.randomBytes(8).toString('hex')}`);
      const received: { tmp: string; filename: string; size: number }[] = [];
      let folder = '';
      try {
        await fsp.mkdir(tmpDir, { recursive: true });
        for await (const part of parts) {
          if (part.type === 'field') {
            if (part.fieldname === 'path') folder = String(part.value ?? '');
            continue;
          }
          if (part.fieldname !== 'file') {
            part.file.resume();
            continue;
          }
          const filename = path.basename(String(part.filename ?? '').replace(/\\/g, '/'));
          if (!filename || filename === '.' || filename === '..' || filename.includes('\0'))
            throw new BadRequest('invalid_filename', 'The uploaded file has no usable name.');
          const tmp = path.join(tmpDir, String(received.length));
          await pipeline(part.file, fs.createWriteStream(tmp));
          if (part.file.truncated)
            throw new PayloadTooLarge('The uploaded file is larger than the limit.', 'payload_too_large', {
              limit_bytes: options.uploadLimitBytes,
            });
          const size = (await fsp.stat(tmp)).size;
          received.push({ tmp, filename, size });
          await quota.reserve(project.owner_id, size);
        }
        if (!received.length) throw new BadRequest('file_required', 'The multipart field `file` is required.');
        const target = await inProject(project.dir, folder);
        const st = await fsp.stat(target.abs).catch(() => undefined);
        if (st && !st.isDirectory()) throw new BadRequest('not_a_directory', 'The target path is a file.');
        await fsp.mkdir(target.abs, { recursive: true });
        const files = [];
        for (const r of received) {
          const dest = await inProject(project.dir, target.rel ? `${target.rel}/${r.filename}` : r.filename);
          await fsp.rename(r.tmp, dest.abs);
          files.push({ path: dest.rel, size: r.size });
        }
        return { ok: true, files };
      } finally {
        await fsp.rm(tmpDir, { recursive: true, force: true });
      }
    },

    /**
     * `git clone --depth 1` of an http(s):// repository into `dir` (default: the repository's name), no shell,
     * time-limited (60 s), under the outbound rules of note sources: the host must resolve to public addresses
     * (`checkCloneUrl`) and git connects to those very addresses (`http.curloptResolve`), follows no redirect
     * (`http.followRedirects=false`, which also stops http-alternates), speaks only http and https, and reads no
     * system or user git configuration (no `url.insteadOf`, credential helpers or proxies from there). A URL on the
     * code host's origin is fetched with the caller's code host token when they connected it (docs/api.md,
     * Connecting the code host): git gets it as an `Authorization` header for that origin only, through its
     * environment (never the command line, the URL or the clone's `.git/config`).
     * The owner's storage quota and the disk floor are checked before the clone and the clone's bytes after it: a
     * clone past the quota is removed again (413 `storage_quota_exceeded`).
     * @throws BadRequest `invalid_url` | `url_not_allowed`; Conflict `already_exists`; 504 `clone_timeout`;
     *   502 `clone_failed` (one generic message; nothing is left behind on failure); 413; 507.
     */
    async clone(actor: Actor, name: string, body: { url: string; dir?: string }) {
      const project = await deps.access.project(actor, name);
      const { url: u, pin } = await checkCloneUrl(body.url, options.allow);
      const guess =
        path.posix
          .basename(u.pathname.replace(/\/+$/, ''))
          .replace(/\.git$/, '')
          .replace(/[^A-Za-z0-9._-]/g, '_') || 'repo';
      const { abs, rel } = await inProject(project.dir, body.dir ?? guess);
      if (!rel || (await fsp.lstat(abs).catch(() => undefined)))
        throw new Conflict('already_exists', 'The target folder already exists.');
      await quota.reserve(project.owner_id, 0);
      await fsp.mkdir(path.dirname(abs), { recursive: true }).catch((err) => {
        throw clash(err);
      });
      const args = [
        '-c',
        'protocol.allow=never',
        '-c',
        'protocol.http.allow=always',
        '-c',
        'protocol.https.allow=always',
        '-c',
        'http.followRedirects=false',
        '-c',
        'credential.helper=',
        ...(pin ? ['-c', `http.curloptResolve=${pin}`] : []),
        'clone',
        '--depth',
        '1',
        '--no-recurse-submodules',
        '--',
        u.toString(),
        abs,
      ];
      const credential = await deps.codehost?.cloneCredential(actor.id, u);
      const auth: Record<string, string> = credential
        ? {
            GIT_CONFIG_COUNT: '1',
            GIT_CONFIG_KEY_0: `http.${credential.prefix}.extraHeader`,
            GIT_CONFIG_VALUE_0: credential.header,
          }
        : {};
      const result = await new Promise<{ timedOut: boolean; failed: boolean }>((resolve) => {
        execFile(
          'git',
          args,
          {
            timeout: options.cloneTimeoutMs,
            killSignal: 'SIGKILL',
            maxBuffer: 1024 * 1024,
            env: {
              ...process.env,
              GIT_TERMINAL_PROMPT: '0',
              GIT_ASKPASS: 'echo',
              SSH_ASKPASS: 'echo',
              GIT_CONFIG_NOSYSTEM: '1',
              GIT_CONFIG_GLOBAL: '/dev/null',
              ...auth,
            },
          },
          (err) => {
            if (!err) return resolve({ timedOut: false, failed: false });
            const timedOut =
              (err as { killed?: boolean }).killed === true || (err as { signal?: string }).signal === 'SIGKILL';
            resolve({ timedOut, failed: true });
          },
        );
      });
      if (result.failed) {
        await fsp.rm(abs, { recursive: true, force: true });
        if (result.timedOut)
          throw new Upstream(
            504,
            'clone_timeout',
            `git clone did not finish within ${Math.round(options.cloneTimeoutMs / 1000)} s.`,
          );
        throw cloneFailed();
      }
      try {
        await quota.reserve(project.owner_id, await dirBytes(abs));
      } catch (err) {
        await fsp.rm(abs, { recursive: true, force: true });
        throw err;
      }
      return { ok: true, path: rel };
    },
  };
}

export type FilesService = ReturnType<typeof createFilesService>;
