/**
 * A sandbox home of a fixed size, held by the kernel (docs/configuration.md, Cloud sandbox caps: `CLOUD_HOME_MB`):
 * a sparse file system image made once with mkfs.ext4 and loop-mounted `nosuid,nodev`. Used by the `process`
 * runtime (the image mounted as the sandbox's home) and the `docker` runtime (mounted on the host and bound into
 * the container as `/home/user`, when the engine runs on this host). Needs root.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { RuntimeUnavailable } from './runtime.ts';

/** Run a system command; a failure becomes 503 `container_caps_unavailable` naming the command and its error. */
const run = (cmd: string, args: string[]) =>
  new Promise<void>((resolve, reject) =>
    execFile(cmd, args, { timeout: 30_000 }, (err, _o, stderr) =>
      err
        ? reject(
            new RuntimeUnavailable(
              'The sandbox home could not be prepared.',
              `${cmd}: ${stderr || err.message}`,
              'container_caps_unavailable',
            ),
          )
        : resolve(),
    ),
  );

/**
 * Make the image `img` of `sizeMb` MiB when it does not exist: a sparse file formatted ext4 with its root owned by
 * `uid` (no blocks reserved, a 4 MiB journal). A failed format leaves no image behind.
 * @throws RuntimeUnavailable `container_caps_unavailable`.
 */
export async function ensureHomeImage(img: string, sizeMb: number, uid: number): Promise<void> {
  if (fs.existsSync(img)) return;
  const fh = await fsp.open(img, 'wx', 0o600);
  try {
    await fh.truncate(sizeMb * 1024 * 1024);
  } finally {
    await fh.close();
  }
  await run('mkfs.ext4', ['-q', '-F', '-m', '0', '-J', 'size=4', '-E', `root_owner=${uid}:${uid}`, img]).catch(
    async (err) => {
      await fsp.rm(img, { force: true });
      throw err;
    },
  );
}

/** Loop-mount the image `img` at `dir` (`nosuid,nodev`), mode 0700. @throws RuntimeUnavailable. */
export async function mountHomeImage(img: string, dir: string): Promise<void> {
  await run('mount', ['-o', 'loop,nosuid,nodev', img, dir]);
  await fsp.chmod(dir, 0o700);
}

/** Unmount `dir` (lazily: a process still inside lets go later; its loop device is released with it). */
export function unmountHome(dir: string): Promise<void> {
  return new Promise<void>((resolve) => execFile('umount', ['-l', dir], () => resolve()));
}
