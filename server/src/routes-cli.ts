/**
 * `npm run routes`: print every registered route, one `METHOD PATH` a line, with `:param` placeholders
 * (streams are listed as GET).
 * Builds the app over a database stand-in that refuses use: no server starts, no database is needed.
 */
import { loadConfig } from './config.ts';
import { buildApp } from './app.ts';
import { createDeps } from './deps.ts';
import { silentLogger } from './lib/logger.ts';
import type { Database } from './db/database.ts';

const refuse = new Proxy(
  {},
  {
    get: () => {
      throw new Error('no database in routes listing');
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
const app = await buildApp(deps, { logger: false });
process.stdout.write(`${[...new Set(app.routeList)].join('\n')}\n`);
