/**
 * Runs once per `npm test`: prepares a migrated template database that every test file clones.
 * Embedded (default): a PGlite data-dir tarball. PostgreSQL (`TEST_DATABASE_URL`): a template database.
 */
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { createJobQueue } from '../src/jobs/queue.ts';
import { ensureWebBuild } from '../../web/build.js';

const quiet = { error() {}, warn() {} };
/** Install the job queue's schema once in the template, so test apps start it quickly. */
async function installJobSchema(database: Awaited<ReturnType<typeof openDatabase>>) {
  const q = createJobQueue(database, quiet);
  await q.start();
  await q.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    dbKind: 'pglite' | 'postgres';
    /** pglite: path of the template tarball; postgres: name of the template database. */
    template: string;
    serverUrl: string;
  }
}

export default async function setup(project: TestProject) {
  // Tests that start the service (`node server/start.js`) find the web UI built for the current sources, so no
  // start spends its time building it (start.js builds when web/ changed since the last build).
  await ensureWebBuild();
  const url = process.env.TEST_DATABASE_URL;
  const tmp = path.resolve('.tmp');
  fs.mkdirSync(tmp, { recursive: true });
  if (url) {
    const name = `crm_tmpl_${process.pid}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`drop database if exists ${name}`);
    await admin.query(`create database ${name}`);
    const u = new URL(url);
    u.pathname = `/${name}`;
    const db = await openDatabase({ url: u.toString(), dataDir: tmp, poolSize: 2 });
    await migrateToLatest(db.db);
    await installJobSchema(db);
    await db.close();
    project.provide('dbKind', 'postgres');
    project.provide('template', name);
    project.provide('serverUrl', url);
    return async () => {
      // Databases cloned by test files are dropped by the files themselves; drop stragglers and the template.
      const left = await admin.query(`select datname from pg_database where datname like '${name}_t_%'`);
      for (const r of left.rows) await admin.query(`drop database if exists ${r.datname} with (force)`);
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    };
  }
  const db = await openDatabase({ url: 'memory://', dataDir: tmp });
  await migrateToLatest(db.db);
  await installJobSchema(db);
  const file = path.join(tmp, `pglite-template-${process.pid}.tar`);
  const dump = await db.dump!();
  fs.writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  await db.close();
  project.provide('dbKind', 'pglite');
  project.provide('template', file);
  project.provide('serverUrl', '');
  return async () => fs.rmSync(file, { force: true });
}
