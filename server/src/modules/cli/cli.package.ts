/**
 * The `arc` package (`<checkout>/cli`) as the tarball npm installs (`npm install -g <url>`): npm's own layout,
 * every file under a `package/` folder, gzip. Built once per process from the files the package's
 * package.json lists (`files`, plus package.json itself), portable (no owners, umask 022) and with one fixed
 * time, so every instance serves the same bytes for the same checkout.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Upstream } from '../../http/errors.ts';
import { CHECKOUT_ROOT } from '../../lib/checkout.ts';

/** `<checkout>/cli`: the `arc` package of this repository. */
export const DEFAULT_CLI_DIR = path.join(CHECKOUT_ROOT, 'cli');

/** The fixed time of every entry (npm does the same for reproducible tarballs). */
const ENTRY_TIME = new Date('1985-10-26T08:15:00Z');

export interface CliPackage {
  /** `{name, version}` from the package's package.json. @throws Upstream 503 `cli_package_unavailable` */
  manifest(): { name: string; version: string };
  /**
   * The package as an npm tarball. @returns `{filename: 'arc-<version>.tgz', bytes}` (bytes: gzip data)
   * @throws Upstream 503 `cli_package_unavailable` when the folder is missing or unreadable
   */
  tarball(): Promise<{ filename: string; bytes: Buffer }>;
}

/** The `arc` package in `dir` (default `<checkout>/cli`). */
export function createCliPackage(dir: string = DEFAULT_CLI_DIR): CliPackage {
  let manifest: { name: string; version: string; files: string[] } | undefined;
  let built: Promise<{ filename: string; bytes: Buffer }> | undefined;
  const unavailable = () =>
    new Upstream(503, 'cli_package_unavailable', 'The CLI package is not part of this installation.');

  const read = () => {
    if (manifest) return manifest;
    try {
      const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
      const files = Array.isArray(pkg.files) ? pkg.files.filter((f: unknown) => typeof f === 'string') : [];
      manifest = { name: String(pkg.name), version: String(pkg.version), files };
      return manifest;
    } catch {
      throw unavailable();
    }
  };

  async function build() {
    const { version, files } = read();
    const entries = ['package.json', ...files.filter((f) => fs.existsSync(path.join(dir, f)))];
    const chunks: Buffer[] = [];
    // node-tar at the first package built, not at every start.
    const { create: createTar } = await import('tar');
    const stream = createTar(
      {
        cwd: dir,
        gzip: true,
        prefix: 'package',
        portable: true,
        mtime: ENTRY_TIME,
      },
      entries,
    );
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return { filename: `arc-${version}.tgz`, bytes: Buffer.concat(chunks) };
  }

  return {
    manifest() {
      const { name, version } = read();
      return { name, version };
    },
    tarball() {
      built ??= build().catch((err) => {
        built = undefined;
        throw err instanceof Upstream ? err : unavailable();
      });
      return built;
    },
  };
}
