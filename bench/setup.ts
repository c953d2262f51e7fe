/**
 * Shared bench setup: the real app over a throw-away embedded database (PGlite in memory), listening on
 * 127.0.0.1 on a free port, with one user and one project.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../server/src/config.ts';
import { openDatabase } from '../server/src/db/database.ts';
import { migrateToLatest } from '../server/src/db/migrate.ts';
import { buildApp } from '../server/src/app.ts';
import { createDeps } from '../server/src/deps.ts';

const silent: any = {
  info() {},
  warn() {},
  error() {},
  debug() {},
  trace() {},
  fatal() {},
  child: () => silent,
  level: 'silent',
};

export async function startBenchServer(projectName = 'bench') {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'crm-bench-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    DATABASE_URL: 'memory://',
    BREACH_CHECK_URL: 'off',
    HOST: '127.0.0.1',
    PORT: '0',
  });
  const database = await openDatabase({ url: config.databaseUrl, dataDir });
  await migrateToLatest(database.db);
  const keys = {
    crmSecret: 'bench-signing-secret-0123456789abcdef',
    secretEncryptionKey: 'bench-encryption-key-0123456789abcd',
  };
  const deps = createDeps(config, database, keys, silent);
  const app = await buildApp(deps, { logger: false });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address() as { port: number };
  const user = await database.db
    .insertInto('users')
    .values({ email: 'bench@example.com', password_hash: 'x', chat_id: '1', name: 'Bench' })
    .returning('id')
    .executeTakeFirstOrThrow();
  const project = await database.db
    .insertInto('projects')
    .values({ owner_id: user.id, name: projectName, display_name: projectName })
    .returning('id')
    .executeTakeFirstOrThrow();
  fs.mkdirSync(deps.access.projectDir(project.id), { recursive: true });
  const token = await deps.tokens.sign({ sub: user.id, role: 'user', pv: 0, chat_id: String(user.id) });
  return {
    url: `http://127.0.0.1:${address.port}`,
    db: database.db,
    projectId: project.id,
    projectName,
    token,
    async close() {
      await app.close();
      await database.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
