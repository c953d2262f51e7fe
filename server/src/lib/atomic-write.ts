/**
 * Atomic file writes: the content goes to a temporary file in the same directory, is flushed to disk (fsync)
 * and renamed over the target, so a reader sees the old file or the new one, never a part. Built on the
 * `write-file-atomic` package (npm; it also keeps an existing file's mode and owner, serializes writes to
 * the same file within the process in call order, and removes its temporary file on failure or exit).
 *
 * A target that is a symbolic link is written through (its target is replaced): callers writing into a
 * directory users can change check the path first with `resolveInside` (lib/paths.ts).
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import writeFileAtomic from 'write-file-atomic';

/**
 * Write `data` to `file` atomically, creating missing parent directories. Writes of one file land in the order
 * they were started (when its folder exists; the folder is created on the first failure, then the write retried).
 * @param data text (UTF-8) or bytes.
 * @throws the file system error (nothing is left behind).
 */
export async function atomicWrite(file: string, data: string | Buffer): Promise<void> {
  try {
    await writeFileAtomic(file, data);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await fsp.mkdir(path.dirname(file), { recursive: true });
    await writeFileAtomic(file, data);
  }
}
