/**
 * Start the service: read the configuration, make sure the port can be bound, open the database (embedded
 * PGlite under DATA_DIR, locked to this process, unless DATABASE_URL names a server), apply migrations, import
 * managed secrets, listen, and shut down gracefully on SIGINT/SIGTERM; see docs/configuration.md.
 *
 * Start-up failures that have one clear cause (the port is taken, another process holds DATA_DIR) print one
 * line on stderr and exit with code 1; an invalid configuration exits with code 2.
 *
 * Shutdown (close-with-grace): the first SIGTERM/SIGINT stops accepting connections, lets in-flight requests
 * and running jobs finish, closes the database and exits 0; when that takes longer than SHUTDOWN_TIMEOUT_MS
 * (default 10 s), or a second signal arrives, the process exits at once with code 1.
 */
import fs from 'node:fs';
import net from 'node:net';
import closeWithGrace from 'close-with-grace';
import pino from 'pino';
import { type Config, ConfigError, loadConfig } from './config.ts';
import { DataDirLockedError } from './db/data-dir-lock.ts';
import { type Database, openDatabase } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { ensureKeys } from './secrets/keys.ts';
import { type App, buildApp } from './app.ts';
import { createDeps } from './deps.ts';
import { loggerOptions } from './http/logging.ts';
import { createLogDestination } from './lib/log-destination.ts';
import { startLine } from './lib/capabilities.ts';
import { SERVICE_VERSION } from './lib/version.ts';

/** A repeat of the first shutdown signal within this many ms is the same request (see `onSignal`). */
const DUPLICATE_SIGNAL_MS = 1000;

/** The address cannot be bound (taken by another process, or not allowed). */
class ListenError extends Error {}

/**
 * Bind `host:port` for a moment and release it, so a server that could not listen stops before it opens (and
 * locks) the database. @throws ListenError with one line naming the address and the reason.
 */
async function assertCanListen(host: string, port: number): Promise<void> {
  const probe = net.createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen({ host, port, exclusive: true }, resolve);
    });
  } catch (err) {
    throw listenError(host, port, err as NodeJS.ErrnoException);
  } finally {
    await new Promise((r) => probe.close(r));
  }
}

function listenError(host: string, port: number, err: NodeJS.ErrnoException): ListenError {
  const why =
    err.code === 'EADDRINUSE'
      ? 'the address is already in use'
      : err.code === 'EACCES'
        ? 'permission denied'
        : err.code === 'EADDRNOTAVAIL'
          ? 'the address is not available on this machine'
          : err.message;
  return new ListenError(
    `cannot listen on ${host}:${port}: ${why} (${err.code ?? 'error'}); the database was not opened`,
  );
}

async function main() {
  let config: Config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  // Log lines survive a kill: warnings and errors are written at once, the rest within LOG_FLUSH_MS
  // (lib/log-destination.ts); whatever is left is written out when the process exits, whatever the reason.
  const destination = createLogDestination({ fd: 1, flushMs: config.logFlushMs });
  process.on('exit', () => destination.flushSync());
  const log = pino(loggerOptions(config.logLevel), destination);
  await assertCanListen(config.host, config.port);

  // What is open so far, for a signal that arrives while the service is still starting.
  const opened: { app?: App; database?: Database } = {};
  const grace = closeWithGrace(
    {
      delay: config.shutdownTimeoutMs,
      logger: false,
      onSecondError: (err) => log.error({ err }, 'second failure while shutting down: exiting now'),
      onTimeout: (ms) => log.error({ ms }, 'shutdown did not finish in time: exiting now'),
      // SIGINT and SIGTERM are handled below; the others end the process as Node's defaults do.
      skip: [
        'SIGINT',
        'SIGTERM',
        'SIGHUP',
        'SIGQUIT',
        'SIGILL',
        'SIGTRAP',
        'SIGABRT',
        'SIGBUS',
        'SIGFPE',
        'SIGSEGV',
        'SIGUSR2',
        'beforeExit',
      ],
    },
    async ({ err }) => {
      if (err) log.error({ err }, 'unexpected failure: shutting down');
      await opened.app?.close();
      await opened.database?.close();
    },
  );
  // The first SIGINT/SIGTERM starts the graceful close; a later one exits at once. One Ctrl-C under `npm start`
  // arrives twice (the terminal signals the whole process group and npm forwards its copy), so a repeat within
  // DUPLICATE_SIGNAL_MS of the first counts as the same one.
  let firstSignal = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    const now = Date.now();
    if (!firstSignal) {
      firstSignal = now;
      log.info({ signal, timeout_ms: config.shutdownTimeoutMs }, 'shutting down');
      grace.close();
    } else if (now - firstSignal >= DUPLICATE_SIGNAL_MS) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const steps: Record<string, number> = {};
  let mark = performance.now();
  const step = (name: string) => {
    const now = performance.now();
    steps[name] = Math.round(now - mark);
    mark = now;
  };
  steps.modules = Math.round(mark); // since the process started: loading the code
  fs.mkdirSync(config.dataDir, { recursive: true });
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir });
  opened.database = database;
  step('open_database');
  // Keys after the database: on the embedded one the data-directory lock is held, so two processes starting on a
  // new DATA_DIR cannot both write keys.json.
  const keys = ensureKeys(config.dataDir, {
    crmSecret: config.crmSecret,
    secretEncryptionKey: config.secretEncryptionKey,
  });
  const applied = await migrateToLatest(database.db);
  step('migrations');
  log.info(
    {
      database: database.kind,
      location: database.location,
      vector: database.vector,
      migrations_applied: applied.length,
    },
    'database ready',
  );
  const deps = createDeps(config, database, keys, log);
  const imported = await deps.secrets.importMissing(config.managedSecretsFromEnv);
  if (imported.length) log.info({ names: imported }, 'managed secrets imported into the secret store');
  const app = await buildApp(deps, { loggerInstance: log });
  opened.app = app;
  step('build_app');
  await app.ready(); // plugins loaded, lifecycle started (index, public docs, runs, job queue)
  step('start_services');
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    // The port was taken between the check and now: release everything before reporting it.
    const e = err as NodeJS.ErrnoException;
    await app.close().catch(() => {});
    await database.close().catch(() => {});
    throw e.code ? listenError(config.host, config.port, e) : err;
  }
  step('listen');
  // The start line (docs/operations.md, The first start): where to open the service, the database, and each optional
  // tool present or missing with what that costs. Written out at once (flushSync), not left in the log's buffer.
  const capabilities = await deps.capabilities.list();
  const shownHost = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const url =
    config.appUrl !== `http://${config.host}:${config.port}` ? config.appUrl : `http://${shownHost}:${config.port}`;
  const databaseText =
    database.kind === 'pglite'
      ? `embedded PostgreSQL (PGlite, pgvector) in ${database.location}`
      : `PostgreSQL server${database.vector ? ' with pgvector' : ' (no pgvector: exact-scan search)'}`;
  log.info(
    {
      version: SERVICE_VERSION,
      url,
      database: database.kind,
      capabilities: Object.fromEntries(capabilities.map((c) => [c.name, c.present])),
      ms: Math.round(performance.now()),
      steps,
      rss_mib: Math.round(process.memoryUsage().rss / 2 ** 20),
    },
    startLine({ url, database: databaseText, version: SERVICE_VERSION, capabilities }),
  );
  destination.flushSync();
}

main().catch((err) => {
  const known = err instanceof ListenError || err instanceof DataDirLockedError;
  process.stderr.write(known ? `${(err as Error).message}\n` : `fatal: ${(err as Error).message}\n`);
  process.exit(1);
});
