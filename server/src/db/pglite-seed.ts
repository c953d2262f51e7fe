/**
 * The embedded database's seed image (docs/ARCHITECTURE.md, Database): a data directory right after PGlite's
 * initdb and `create extension vector`, as an uncompressed tarball, so a new DATA_DIR is unpacked from it instead
 * of running initdb (measured ~12 s of a ~17 s first start on a loaded 2-core machine; unpacking the image takes
 * well under a second). It holds no data of any installation: no table of the service, no key, no user.
 *
 * Kept at `node_modules/.cache/crm-server/pglite-seed-<key>.tar`, where `<key>` hashes the PGlite and pgvector
 * versions and the server settings the image was made with, so an upgrade makes a new one. Written by
 * `npm install` (the `prepare` script runs `server/src/db/seed-cli.ts`) and otherwise by the first start that ran
 * initdb itself. Nothing is downloaded. Every database made from one image shares its system identifier (which
 * only replication looks at; PGlite does not replicate).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import module from 'node:module';
import path from 'node:path';

/** The cache folder and the package.json files whose versions key the image. */
function locate(): { dir: string; packages: string[] } | undefined {
  const pglite = module.findPackageJSON('@electric-sql/pglite', import.meta.url);
  const vector = module.findPackageJSON('@electric-sql/pglite-pgvector', import.meta.url);
  if (!pglite || !vector) return undefined;
  // …/node_modules/@electric-sql/pglite/package.json → …/node_modules/.cache/crm-server
  return { dir: path.join(path.dirname(pglite), '..', '..', '.cache', 'crm-server'), packages: [pglite, vector] };
}

/**
 * The seed image's path for these server settings (`PGLITE_SETTINGS` of db/database.ts), whether or not it exists.
 * @returns undefined when the PGlite packages cannot be located.
 */
export function seedPath(settings: readonly string[]): string | undefined {
  const where = locate();
  if (!where) return undefined;
  const hash = crypto.createHash('sha256');
  for (const p of where.packages) hash.update(`${JSON.parse(fs.readFileSync(p, 'utf8')).version}\n`);
  hash.update(settings.join('\n'));
  return path.join(where.dir, `pglite-seed-${hash.digest('hex').slice(0, 16)}.tar`);
}

/** The seed image at `file` as a Blob, or undefined when there is none (or it cannot be read). */
export function readSeed(file: string | undefined): Blob | undefined {
  if (!file) return undefined;
  try {
    return new Blob([fs.readFileSync(file)]);
  } catch {
    return undefined;
  }
}

/**
 * Write `image` as the seed at `file`, atomically (a temporary file renamed), and remove older seeds of other
 * keys. Best effort: a folder that cannot be written leaves things as they were. @returns whether it was written.
 */
export async function writeSeed(file: string, image: Blob): Promise<boolean> {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, Buffer.from(await image.arrayBuffer()));
    fs.renameSync(tmp, file);
    for (const name of fs.readdirSync(path.dirname(file))) {
      if (/^pglite-seed-[0-9a-f]{16}\.tar$/.test(name) && name !== path.basename(file))
        fs.rmSync(path.join(path.dirname(file), name), { force: true });
    }
    return true;
  } catch {
    return false;
  }
}
