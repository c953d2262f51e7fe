/**
 * Start the service: read the configuration, open the database (embedded PGlite under DATA_DIR unless
 * DATABASE_URL names a server), apply migrations, import managed secrets, listen, and shut down
 * gracefully on SIGINT/SIGTERM (CONTRACT.md §2).
 */
import fs from 'node:fs';
import pino from 'pino';
import { type Config, ConfigError, loadConfig } from './config.ts';
import { openDatabase } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { ensureKeys } from './secrets/keys.ts';
import { buildApp } from './app.ts';
import { createDeps } from './deps.ts';
import { loggerOptions } from './http/logging.ts';

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
  const log = pino(loggerOptions(config.logLevel));
  fs.mkdirSync(config.dataDir, { recursive: true });
  const keys = ensureKeys(config.dataDir, {
    crmSecret: config.crmSecret,
    secretEncryptionKey: config.secretEncryptionKey,
  });
  const started = Date.now();
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir });
  const applied = await migrateToLatest(database.db);
  log.info(
    {
      database: database.kind,
      location: database.location,
      vector: database.vector,
      migrations_applied: applied.length,
      ms: Date.now() - started,
    },
    'database ready',
  );
  const deps = createDeps(config, database, keys, log);
  const imported = await deps.secrets.importMissing(config.managedSecretsFromEnv);
  if (imported.length) log.info({ names: imported }, 'managed secrets imported into the secret store');
  const app = await buildApp(deps, { loggerInstance: log });
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    try {
      await app.close();
      await database.close();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  await app.listen({ port: config.port, host: config.host });
}

main().catch((err) => {
  process.stderr.write(`fatal: ${(err as Error).message}\n`);
  process.exit(1);
});
