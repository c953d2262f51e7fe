import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { openTestDatabase } from '../../test/helpers.ts';
import { sql } from 'kysely';
import { createJobQueue } from './queue.ts';
import type { Database } from '../db/database.ts';

const quiet = { error() {}, warn() {} };
interface TestJobs {
  'test.tx': { v: string };
  'test.restart': { n: number };
  'test.retry': Record<string, never>;
  'test.legacy': { n: number };
  'test.scheduled': Record<string, never>;
}
let database: Database;
let drop: () => Promise<void>;
const dir = fs.mkdtempSync(path.join(path.resolve('.tmp'), 'jobs-'));

const waitFor = async (cond: () => boolean, ms = 8000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
};

beforeAll(async () => {
  ({ database, drop } = await openTestDatabase(dir));
});
afterAll(async () => {
  await database.close();
  await drop();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('durable job queue', () => {
  it('runs a job sent in a committed transaction and never one sent in a rolled-back transaction', async () => {
    const q = createJobQueue<TestJobs>(database, quiet);
    const seen: string[] = [];
    q.define('test.tx', async (d) => void seen.push(d.v));
    await q.start();
    await database.db.transaction().execute(async (tx) => {
      await q.send('test.tx', { v: 'committed' }, { tx });
    });
    await database.db
      .transaction()
      .execute(async (tx) => {
        await q.send('test.tx', { v: 'rolled-back' }, { tx });
        throw new Error('abort');
      })
      .catch(() => {});
    await waitFor(() => seen.includes('committed'));
    await new Promise((r) => setTimeout(r, 1200));
    expect(seen).toEqual(['committed']);
    await q.stop();
  });

  it("writes a schedule to pg-boss's schedule table when it starts (UTC), once however often it starts", async () => {
    const schedules = () =>
      sql<{ name: string; cron: string; timezone: string; missed: string | null }>`
        select name, cron, timezone, options->>'missed' as missed from pgboss.schedule
        where name = 'test.scheduled'`.execute(database.db);
    for (let i = 0; i < 2; i++) {
      const q = createJobQueue<TestJobs>(database, quiet);
      q.define('test.scheduled', async () => {});
      q.schedule('test.scheduled', '0 * * * *', {}, { missed: 'once' });
      await q.start();
      expect(() => q.schedule('test.scheduled', '0 * * * *', {})).toThrow(/before the queue starts/);
      await q.stop();
    }
    expect((await schedules()).rows).toEqual([
      { name: 'test.scheduled', cron: '0 * * * *', timezone: 'UTC', missed: 'once' },
    ]);
  });

  it('keeps a job sent before a stop and runs it after the next start (restart)', async () => {
    const first = createJobQueue<TestJobs>(database, quiet);
    first.define('test.restart', async () => {
      throw new Error('this instance never runs it');
    });
    // Not started with workers for this queue: send only.
    const sender = createJobQueue<TestJobs>(database, quiet);
    await sender.send('test.restart', { n: 1 });
    await sender.stop();
    const seen: number[] = [];
    const second = createJobQueue<TestJobs>(database, quiet);
    second.define('test.restart', async (d) => void seen.push(d.n));
    await second.start();
    await waitFor(() => seen.length === 1);
    expect(seen).toEqual([1]);
    await second.stop();
  });

  it('retries a failing job', async () => {
    const q = createJobQueue<TestJobs>(database, quiet);
    let attempts = 0;
    q.define(
      'test.retry',
      async () => {
        attempts++;
        if (attempts < 2) throw new Error('first attempt fails');
      },
      { retryDelay: 1 },
    );
    await q.start();
    await q.send('test.retry', {}, { retryLimit: 2 });
    await waitFor(() => attempts >= 2, 15000);
    expect(attempts).toBe(2);
    await q.stop();
  });
});

describe('upgrade from pg-boss 10', () => {
  it("runs the unfinished jobs of a pg-boss 10 schema once, under pg-boss's current schema, and drops the old one", async () => {
    const legacyDir = fs.mkdtempSync(path.join(path.resolve('.tmp'), 'jobs-legacy-'));
    const legacy = await openTestDatabase(legacyDir);
    const db = legacy.database;
    try {
      await db.executeSql('drop schema if exists pgboss cascade');
      await db.executeSql(fs.readFileSync('server/test/fixtures/pgboss-10-schema.sql', 'utf8'));
      await db.executeSql(`select pgboss.create_queue('test.legacy', '{"policy":"standard"}')`);
      await db.executeSql(`insert into pgboss.job (name, data, state, singleton_key, retry_limit) values
        ('test.legacy', '{"n":1}', 'created', null, 3),
        ('test.legacy', '{"n":2}', 'active', 'only-one', 3),
        ('test.legacy', '{"n":3}', 'completed', null, 3),
        ('test.legacy', '{"n":4}', 'failed', null, 3)`);

      const seen: number[] = [];
      const q = createJobQueue<TestJobs>(db, quiet);
      q.define('test.legacy', async (d) => void seen.push(d.n));
      await q.start();
      await waitFor(() => seen.length >= 2);
      await new Promise((r) => setTimeout(r, 1200));
      expect(seen.sort()).toEqual([1, 2]);
      const version = await sql<{ v: number }>`select max(version)::int as v from pgboss.version`.execute(db.db);
      expect(version.rows[0].v).toBeGreaterThanOrEqual(25);
      const old = await sql<{
        n: number;
      }>`select count(*)::int as n from pg_namespace where nspname like 'pgboss_v%'`.execute(db.db);
      expect(old.rows[0].n).toBe(0);
      await q.stop();
      // A second start finds nothing left to carry over.
      const again = createJobQueue<TestJobs>(db, quiet);
      again.define('test.legacy', async (d) => void seen.push(d.n));
      await again.start();
      await new Promise((r) => setTimeout(r, 1200));
      expect(seen.sort()).toEqual([1, 2]);
      await again.stop();
    } finally {
      await db.close();
      await legacy.drop();
      fs.rmSync(legacyDir, { recursive: true, force: true });
    }
  });
});
