/**
 * The embedded database's seed images (docs/ARCHITECTURE.md, Database), uncompressed tarballs of a data directory
 * that a new DATA_DIR is unpacked from instead of running initdb (measured ~12 s of a ~17 s first start on a loaded
 * 2-core machine; unpacking takes well under a second):
 * - the bare image (`pglite-seed-<key>.tar`): right after initdb and `create extension vector`;
 * - the schema image (`pglite-schema-<key>.tar`): the bare one with every migration applied, the job queue's schema
 *   installed and the platform's global documents (public docs, skill catalog) indexed with the local embedder, so a
 *   first start has no migration to run and no page to embed either (`schemaKey`; documents changed since are
 *   re-indexed by the start's content-hash check, and all of them when another embedder is configured).
 * Neither holds data of an installation: no key (DATA_DIR/keys.json), no user, no secret (all made after them).
 *
 * Kept under `node_modules/.cache/crm-server/`, keyed by the PGlite and pgvector versions and the server settings
 * (and the schema), so an upgrade makes new ones. Written by `npm install` (the `prepare` script runs
 * `server/src/seed-cli.ts`); the bare one otherwise by the first start that ran initdb itself. Nothing is
 * downloaded. Every database made from one image shares its system identifier (which only replication looks at;
 * PGlite does not replicate).
 */
import { spawnSync } from 'node:child_process';
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
 * @param schema for the schema image: what the schema is made of (`schemaKey`); without it, the bare image.
 * @returns undefined when the PGlite packages cannot be located.
 */
export function seedPath(settings: readonly string[], schema?: string): string | undefined {
  const where = locate();
  if (!where) return undefined;
  const hash = crypto.createHash('sha256');
  for (const p of where.packages) hash.update(`${JSON.parse(fs.readFileSync(p, 'utf8')).version}\n`);
  hash.update(settings.join('\n'));
  if (schema) hash.update(`\n${schema}`);
  return path.join(where.dir, `pglite-${schema ? 'schema' : 'seed'}-${hash.digest('hex').slice(0, 16)}.tar`);
}

/**
 * What the schema image holds besides its tables (seed-cli.ts): changed when seed-cli.ts puts something else in, so
 * an image made by the previous recipe gets another key and `npm install` makes the new one.
 */
const SCHEMA_IMAGE_CONTENT = 'global documents indexed (local embedder)';

/**
 * What the schema image's tables are made of: every migration's name and source file (found from this module's
 * folder upwards, so the same from the sources and from start.js's bundle), the job queue's version, and what else
 * seed-cli.ts puts in (`SCHEMA_IMAGE_CONTENT`). A new or edited migration, or another pg-boss, makes another key:
 * the image no longer matches and the bare one is used (then migrations run as usual) until `npm install` makes the
 * new one.
 */
export function schemaKey(migrations: Record<string, unknown>): string {
  const hash = crypto.createHash('sha256');
  let dir = import.meta.dirname;
  while (!fs.existsSync(path.join(dir, 'server', 'src', 'db', 'migrations')) && path.dirname(dir) !== dir)
    dir = path.dirname(dir);
  const folder = path.join(dir, 'server', 'src', 'db', 'migrations');
  const files = fs.existsSync(folder)
    ? fs
        .readdirSync(folder)
        .filter((f) => f.endsWith('.ts'))
        .sort()
    : [];
  for (const name of Object.keys(migrations)) hash.update(`${name}\n`);
  for (const f of files) hash.update(`${f}\n`).update(fs.readFileSync(path.join(folder, f)));
  const boss = module.findPackageJSON('pg-boss', import.meta.url);
  hash.update(boss ? String(JSON.parse(fs.readFileSync(boss, 'utf8')).version) : 'no pg-boss');
  hash.update(`\n${SCHEMA_IMAGE_CONTENT}`);
  return hash.digest('hex');
}

/**
 * What the short-lived process of `unpackSeed` runs (a CommonJS script given to `node -e`; arguments: the image, the
 * folder to unpack into, node-tar's entry file). The image's names start with `/` (PGlite writes them so): stripped,
 * which node-tar reports as information; any other warning (a damaged entry) fails the unpacking (exit code 1, the
 * warning on stderr).
 */
const UNPACK_SCRIPT = `
const [file, cwd, tarPath] = process.argv.slice(1);
let damaged;
require(tarPath).x({
  file,
  cwd,
  sync: true,
  maxReadSize: 1 << 20,
  onwarn: (code, message) => {
    if (code !== 'TAR_ENTRY_INFO') damaged ??= code + ': ' + message;
  },
});
if (damaged) {
  process.stderr.write(damaged);
  process.exitCode = 1;
}
`;

/**
 * Unpack the seed image at `file` into the new data directory `dir` (absent, or an empty folder) on the file system
 * directly, before PGlite opens it as an existing one (the caller holds the data directory's lock). Handing PGlite the image as a Blob (`loadDataDir`) read the
 * 40–60 MiB into memory and wrote every file through its WebAssembly file system: the copies were garbage to collect
 * and the start of a new DATA_DIR ended ~90 MiB above one of an existing DATA_DIR (bench/README.md, "Start-up").
 * node-tar unpacks it in a short-lived child process (this Node.js, waited for): unpacked in the server's own
 * process, its read buffers left up to ~20 MiB of C heap that the allocator kept (measured with /proc/<pid>/smaps
 * 3 s after ready); the child's memory goes back with it, for ~0.1 s more of a first start (its Node.js start).
 * The files go to a temporary folder first, renamed to `dir` when complete, so a start that dies half-way leaves no
 * data directory that looks whole. @returns false when there is no image (or it cannot be unpacked): `dir` is then
 * left as it was.
 */
export function unpackSeed(file: string | undefined, dir: string): boolean {
  if (!file || !fs.existsSync(file)) return false;
  const tmp = `${dir}.seed-${process.pid}`;
  try {
    // What a start that died while unpacking left (under the same lock, so no other process is unpacking now).
    const stale = `${path.basename(dir)}.seed-`;
    for (const name of fs.readdirSync(path.dirname(dir)))
      if (name.startsWith(stale)) fs.rmSync(path.join(path.dirname(dir), name), { recursive: true, force: true });
    fs.mkdirSync(tmp, { recursive: true, mode: 0o700 });
    const child = spawnSync(
      process.execPath,
      ['-e', UNPACK_SCRIPT, file, tmp, module.createRequire(import.meta.url).resolve('tar')],
      { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' },
    );
    if (child.status !== 0) throw new Error(child.stderr || child.error?.message || `exit code ${child.status}`);
    fs.renameSync(tmp, dir);
    return true;
  } catch {
    fs.rmSync(tmp, { recursive: true, force: true });
    return false;
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
      const kind = /^pglite-(seed|schema)-/.exec(path.basename(file))?.[0] ?? path.basename(file);
      if (
        name.startsWith(kind) &&
        /^pglite-(seed|schema)-[0-9a-f]{16}\.tar$/.test(name) &&
        name !== path.basename(file)
      )
        fs.rmSync(path.join(path.dirname(file), name), { force: true });
    }
    return true;
  } catch {
    return false;
  }
}
