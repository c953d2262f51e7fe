/**
 * The bytes a folder holds: the sizes of its regular files, walked without following symbolic links (a link counts
 * nothing, so a link to a big file elsewhere adds no bytes and leaves the folder unread). A missing folder holds 0.
 * Storage quotas measure with it (docs/ARCHITECTURE.md, Storage quotas).
 */
import fsp from 'node:fs/promises';
import path from 'node:path';

/**
 * Sum of the sizes (bytes) of the regular files under `dir`, recursively; entries that vanish during the walk or
 * cannot be read count 0.
 */
export async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  const stack = [dir];
  while (stack.length) {
    const d = stack.pop()!;
    let entries;
    try {
      entries = await fsp.readdir(d, { withFileTypes: true });
    } catch {
      continue;
    }
    const files: string[] = [];
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (e.isFile()) files.push(p);
    }
    // A few stats at once: the walk of a big clone stays short without opening thousands of requests together.
    for (let i = 0; i < files.length; i += 64) {
      const sizes = await Promise.all(
        files.slice(i, i + 64).map((f) =>
          fsp.lstat(f).then(
            (st) => (st.isFile() ? st.size : 0),
            () => 0,
          ),
        ),
      );
      for (const s of sizes) total += s;
    }
  }
  return total;
}
