// @ts-check
/**
 * The key of a build's inputs (server/start.js's bundle, web/build.js's app): a hash of the files' paths and
 * contents, remembered across starts with the files' stat (inode, size, modification and change times) so that a
 * start on an unchanged checkout answers it without reading and hashing them (~2.5 MB of sources and
 * package-lock.json for the bundle: ~15–40 ms of every start, bench/README.md "Start-up"). Any change to a file —
 * an edit, a checkout, a copy, a touch — changes its change time (ctime, which no tool can set back), so the
 * contents are hashed again.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * A remembered stat is trusted only when the files were last changed at least this long before they were hashed: a
 * file written again within the file system's timestamp granularity right after the hash would otherwise keep its
 * times (the "racy" case).
 */
const SETTLED_MS = 2000;

/**
 * @param {{ root: string, files: string[], memo: string, salt?: string, end?: string }} opts `files` (absolute
 *   paths, in the order hashed; a missing one counts as missing) named relative to `root`; `memo` the JSON file that
 *   remembers the key (written best effort: when it cannot be, the key is computed every time); `salt` hashed first;
 *   `end` hashed after each file's contents (default a newline).
 * @returns {string} 16 hex digits
 */
export function filesKey({ root, files, memo, salt = '', end = '\n' }) {
  const stamps = files.map((f) => {
    const s = fs.statSync(f, { throwIfNoEntry: false, bigint: true });
    return `${path.relative(root, f)}\0${s ? `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}` : '-'}`;
  });
  const stamp = `${JSON.stringify([salt, end])}\n${stamps.join('\n')}`;
  try {
    const known = JSON.parse(fs.readFileSync(memo, 'utf8'));
    if (known.stamp === stamp && typeof known.key === 'string') return known.key;
  } catch {
    // not remembered yet, or unreadable: hash below
  }
  const started = Date.now();
  const hash = crypto.createHash('sha256').update(salt);
  for (const f of files) {
    hash.update(`${path.relative(root, f)}\n`);
    if (fs.existsSync(f)) hash.update(fs.readFileSync(f));
    hash.update(end);
  }
  const key = hash.digest('hex').slice(0, 16);
  const settled = files.every((f) => {
    const s = fs.statSync(f, { throwIfNoEntry: false });
    return !s || (s.ctimeMs < started - SETTLED_MS && s.mtimeMs < started - SETTLED_MS);
  });
  if (settled) {
    try {
      fs.mkdirSync(path.dirname(memo), { recursive: true });
      const tmp = `${memo}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, JSON.stringify({ stamp, key }));
      fs.renameSync(tmp, memo);
    } catch {
      // a folder that cannot be written: the key is hashed at every start
    }
  }
  return key;
}
