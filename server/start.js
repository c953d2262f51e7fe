// @ts-check
/**
 * `npm start`: run server/src/main.ts as one plain Node.js process.
 *
 * The TypeScript sources are bundled by esbuild into one ES module (npm packages stay external and load
 * from node_modules as usual) under `node_modules/.cache/crm-server/`, keyed by a hash of the sources, so
 * an unchanged checkout reuses the bundle and an edited one is rebuilt on the next start (~0.3 s). Why not
 * run the sources through tsx's loader: a module-loader hook answers every module's resolve and load from a
 * separate thread, which cost about 1.6 s of CPU and 60 MiB per start (measured on Node 20) for the ~1,500
 * modules the server loads (bench/startup.ts). Stack traces still name the .ts files (inline source maps).
 *
 * Node.js 22 or 24 runs it: `npm start` uses the project's own Node (the `node` package in node_modules,
 * first on the PATH of npm scripts); started by an older `node` directly, it says so and exits with code 1.
 *
 * When the cache folder cannot be written, the sources run through tsx in this process instead.
 *
 * Before that, the web UI is built into `web/dist` when missing or stale (`web/build.js`).
 */
import fs from 'node:fs';
import module from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** The oldest Node.js the service runs on (package.json `engines`). */
const MIN_NODE = [22, 22];
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < MIN_NODE[0] || (major === MIN_NODE[0] && minor < MIN_NODE[1])) {
  process.stderr.write(
    `The service needs Node.js ${MIN_NODE.join('.')} or later (22 or 24); this is ${process.version}. ` +
      'Start it with `npm start`, which runs the Node.js that `npm install` put in node_modules.\n',
  );
  process.exit(1);
}

/**
 * V8 options the service runs with (docs/configuration.md, `NODE_V8_FLAGS`; the measurements are in bench/README.md,
 * "Start-up"). V8 reads them only when the process starts, and `NODE_OPTIONS` refuses most of them, so a start
 * without them replaces itself (`process.execve`: the same pid, nothing left behind) with one that has them.
 * `off` runs with Node's defaults; where `process.execve` is missing (Windows) they are not applied.
 *
 * Node 22 gets two more, each for what Node 24 already does (bench/README.md, "Auth-me"):
 *  - `--experimental-async-context-frame`: AsyncLocalStorage without async hooks (Node 24's default). On Node 22 the
 *    first `run` of one (the embedded database's transaction guard, db/tx-guard.ts) turns on a hook for every promise
 *    of the process for good;
 *  - `--min-semi-space-size=8`: Node 22's V8 starts the young generation small, grows it only as objects survive and
 *    shrinks it again when idle, so under load it collected it up to twice as often as Node 24's, which stays at the
 *    8 MB of `--max-semi-space-size`.
 */
const DEFAULT_V8_FLAGS =
  major < 24
    ? '--max-semi-space-size=8 --liftoff-only --min-semi-space-size=8 --experimental-async-context-frame'
    : '--max-semi-space-size=8 --liftoff-only';
const V8_FLAGS = (process.env.NODE_V8_FLAGS || DEFAULT_V8_FLAGS).split(/\s+/).filter((f) => f && f !== 'off');
if (V8_FLAGS.length && typeof process.execve === 'function' && !V8_FLAGS.every((f) => process.execArgv.includes(f))) {
  process.execve(
    process.execPath,
    [process.execPath, ...process.execArgv, ...V8_FLAGS, import.meta.filename, ...process.argv.slice(2)],
    process.env,
  );
}

const root = path.resolve(import.meta.dirname, '..');
const srcDir = path.join(root, 'server', 'src');
const entry = path.join(srcDir, 'main.ts');
const cacheDir = path.join(root, 'node_modules', '.cache', 'crm-server');
// Loaded only now, in the process that runs the service (it loads node:crypto).
const { filesKey } = await import('./files-key.js');

/**
 * What the bundle is made of: the server's sources (tests excluded), tsconfig.json, package-lock.json (the
 * bundled packages' versions) and this file (the build options), hashed with their paths (`filesKey`: remembered
 * with the files' stat in the cache folder, hashed again when one changed).
 */
function sourceKey() {
  const files = fs
    .readdirSync(srcDir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .sort()
    .map((f) => path.join(srcDir, f));
  return filesKey({
    root,
    files: [...files, ...['tsconfig.json', 'package-lock.json', 'server/start.js'].map((f) => path.join(root, f))],
    memo: path.join(cacheDir, 'bundle-key.json'),
    salt: `${process.version.split('.')[0]}\n`,
  });
}

/**
 * npm packages written as many small ES modules, bundled with the sources: each ES module costs a file read,
 * a parse and a link at start, and these three are ~550 of them (~0.3 s). They are plain JavaScript with no
 * files of their own to find at run time.
 */
const BUNDLED_PACKAGES = ['kysely', 'typebox', 'jose'];

/**
 * Built-in modules the bundle takes as CommonJS (`process.getBuiltinModule`) instead of importing them as ES
 * modules. Importing a built-in as an ES module makes Node read every one of its exports for the module's facade,
 * and `node:http`'s include the getters `WebSocket`, `CloseEvent` and `MessageEvent`, which load Node's own copy of
 * undici: ~70 ms of a start (Node 22 and 24), for classes the service never takes from there. esbuild reads the
 * named imports from the CommonJS object when they are used, so no getter runs at load.
 */
const CJS_BUILTINS = ['http', 'https'];

/** Every other package (and Node's built-ins) stays external: loaded from node_modules as usual. */
const externalPackages = {
  name: 'external-packages',
  /** @param {import('esbuild').PluginBuild} build */
  setup(build) {
    const builtins = new RegExp(`^(node:)?(${CJS_BUILTINS.join('|')})$`);
    build.onResolve({ filter: builtins }, (args) => ({
      path: `node:${args.path.replace(/^node:/, '')}`,
      namespace: 'builtin-cjs',
    }));
    build.onLoad({ filter: /.*/, namespace: 'builtin-cjs' }, (args) => ({
      contents: `module.exports = process.getBuiltinModule(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
    build.onResolve({ filter: /^[^./]/ }, (args) =>
      BUNDLED_PACKAGES.some((p) => args.path === p || args.path.startsWith(`${p}/`))
        ? undefined
        : { path: args.path, external: true },
    );
  },
};

/** The bundle for the current sources: reused when present, else built and written atomically. */
async function bundle() {
  const file = path.join(cacheDir, `main-${sourceKey()}.mjs`);
  if (fs.existsSync(file)) return file;
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    plugins: [externalPackages],
    keepNames: true,
    sourcemap: 'inline',
    sourcesContent: false,
    write: false,
    outfile: file,
    logLevel: 'error',
  });
  fs.mkdirSync(cacheDir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, result.outputFiles[0].contents);
  fs.renameSync(tmp, file);
  // Bundles of earlier sources are no longer needed (a process still running one has it loaded already), nor
  // temporary files a crashed start left (another start may be writing one right now: only old ones go).
  for (const name of fs.readdirSync(cacheDir)) {
    const f = path.join(cacheDir, name);
    const stale = /^main-[0-9a-f]{16}\.mjs$/.test(name)
      ? f !== file
      : name.endsWith('.tmp') &&
        Date.now() - (fs.statSync(f, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > 10 * 60_000;
    if (stale) fs.rmSync(f, { force: true });
  }
  return file;
}

/**
 * Cache V8's compiled code of the server's modules (the bundle and the packages of node_modules) between starts, in
 * the cache folder beside the bundle (a checkout's own, kept across reboots; `NODE_COMPILE_CACHE` names another).
 * Where that cannot be written, Node's default folder (under the system's temporary folder) is used instead.
 */
const compileCache = module.enableCompileCache(process.env.NODE_COMPILE_CACHE || path.join(cacheDir, 'v8'));
if (compileCache.status === module.constants.compileCacheStatus.FAILED) module.enableCompileCache();
process.setSourceMapsEnabled(true);

// The web UI (web/dist): built when missing or older than its sources. A failed build leaves the API serving
// and the pages answering 503 web_ui_not_built; the error is printed.
try {
  const { ensureWebBuild } = await import('../web/build.js');
  await ensureWebBuild({ log: (line) => process.stderr.write(`${line}\n`) });
} catch (err) {
  process.stderr.write(`web UI build failed: ${err instanceof Error ? err.message : String(err)}\n`);
}

let file;
try {
  file = await bundle();
} catch (err) {
  const e = /** @type {NodeJS.ErrnoException} */ (err);
  if (!['EACCES', 'EROFS', 'EPERM'].includes(e.code ?? '')) throw err;
  file = undefined;
}
if (file) {
  await import(pathToFileURL(file).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(entry).href);
}
