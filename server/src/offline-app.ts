/**
 * The app built without a server or a database, for the commands that only read its shape (`npm run routes`,
 * `npm run openapi`): a database stand-in that refuses any use, the default configuration over `DATA_DIR`, and
 * a lifecycle that starts nothing (no jobs, sweeps or bootstrap).
 */
import { buildApp } from './app.ts';
import { loadConfig } from './config.ts';
import type { Database } from './db/database.ts';
import { createDeps } from './deps.ts';
import { silentLogger } from './lib/logger.ts';
import { createServices } from './services.ts';

/**
 * Build the app over a database stand-in. `purpose` names the command in the error a stray database use throws.
 * @returns the Fastify app, registered but not listening; the caller closes it.
 */
export async function buildOfflineApp(purpose: string) {
  const refuse = new Proxy(
    {},
    {
      get: () => {
        throw new Error(`no database in ${purpose}`);
      },
    },
  );
  const database = {
    db: refuse,
    kind: 'pglite',
    vector: false,
    executeSql: async () => ({ rows: [] }),
    close: async () => {},
  } as unknown as Database;
  const config = loadConfig({ DATA_DIR: process.env.DATA_DIR ?? './data' });
  const deps = createDeps(
    config,
    database,
    { crmSecret: 'x'.repeat(32), secretEncryptionKey: 'y'.repeat(32) },
    silentLogger,
  );
  const services = createServices(deps);
  const idle = { start: async () => {}, stop: async () => {} };
  return buildApp(deps, { logger: false, services: { ...services, lifecycle: idle } });
}
