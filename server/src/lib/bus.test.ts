/**
 * The event bus (lib/bus.ts): in-process delivery on any database; between two instances' buses over
 * PostgreSQL LISTEN/NOTIFY: order, messages above NOTIFY's 8000-byte limit, sends inside a transaction (at
 * the commit, never on rollback), and a lost listener connection (reconnected, `onGap`).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { openSharedTestDatabase } from '../../test/helpers.ts';
import { waitFor } from '../../test/runtime-fixtures.ts';
import { kyselyExecutor } from '../jobs/queue.ts';
import type { Database } from '../db/database.ts';
import { type Bus, type BusCatalog, createBus, createLocalBus } from './bus.ts';

const quiet = { warn() {}, error() {} };
const onPostgres = inject('dbKind') === 'postgres';
if (!onPostgres) console.info('bus tests between instances skipped: they need the PostgreSQL test server');

describe('in-process bus', () => {
  it('delivers to this process at once, in order; unsubscribing stops delivery', async () => {
    const bus = createLocalBus(quiet);
    const got: number[] = [];
    const off = bus.subscribe('run.cancel', ({ run }) => got.push(run));
    void bus.publish('run.cancel', { run: 1 });
    expect(got).toEqual([1]); // synchronously
    await bus.publish('run.cancel', { run: 2 });
    off();
    await bus.publish('run.cancel', { run: 3 });
    expect(got).toEqual([1, 2]);
    expect(bus.live).toBe(true);
  });
});

describe.skipIf(!onPostgres)('bus between instances (PostgreSQL LISTEN/NOTIFY)', () => {
  let databases: Database[];
  let drop: () => Promise<void>;
  let a: Bus;
  let b: Bus;
  const dataDir = fs.mkdtempSync(path.join(path.resolve('.tmp'), 'bus-'));

  beforeAll(async () => {
    ({ databases, drop } = await openSharedTestDatabase(dataDir, 2));
    a = createBus(databases[0], quiet);
    b = createBus(databases[1], quiet);
    await Promise.all([a.start(), b.start()]);
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    for (const d of databases ?? []) await d.close();
    await drop?.();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const collect = <C extends keyof BusCatalog>(bus: Bus, channel: C) => {
    const got: BusCatalog[C][] = [];
    const off = bus.subscribe(channel, (p) => got.push(p));
    return { got, off };
  };

  it('delivers every message to the other instance in the order sent, large ones included', async () => {
    expect(a.kind).toBe('postgres');
    expect(a.live && b.live).toBe(true);
    const there = collect(b, 'run.event');
    const here = collect(a, 'run.event');
    const sent: BusCatalog['run.event'][] = [];
    for (let i = 0; i < 60; i++) {
      const e =
        i === 30
          ? { type: 'tool_result', tool: 'read_file', is_error: false, content: 'ü€'.repeat(12_000) }
          : { type: 'text_delta', delta: `part ${i} "quoted" \\ ` };
      sent.push({ run: 7, e });
      void a.publish('run.event', { run: 7, e }); // not awaited: order must hold anyway
    }
    expect(here.got).toEqual(sent); // this process: at once
    await waitFor(async () => there.got.length === sent.length, 10_000);
    expect(there.got).toEqual(sent);
    there.off();
    here.off();
  });

  it('a message sent inside a transaction arrives at its commit, and never when it rolls back', async () => {
    const there = collect(b, 'jobs.sent');
    const here = collect(a, 'jobs.sent');
    await databases[0].db.transaction().execute(async (tx) => {
      await a.publish('jobs.sent', { name: 'committed' }, { tx: kyselyExecutor(tx) });
      await new Promise((r) => setTimeout(r, 200));
      expect(there.got).toEqual([]);
      expect(here.got).toEqual([]);
    });
    await waitFor(async () => there.got.length === 1 && here.got.length === 1, 5000);
    await databases[0].db
      .transaction()
      .execute(async (tx) => {
        await a.publish('jobs.sent', { name: 'rolled-back' }, { tx: kyselyExecutor(tx) });
        throw new Error('roll back');
      })
      .catch(() => {});
    await a.publish('jobs.sent', { name: 'after' }, { delivered: true });
    await waitFor(async () => there.got.length === 2, 5000);
    expect(there.got.map((p) => p.name)).toEqual(['committed', 'after']);
    expect(here.got.map((p) => p.name)).toEqual(['committed', 'after']);
    there.off();
    here.off();
  });

  it('a lost listener connection is reconnected, onGap runs, and messages flow again', async () => {
    let gaps = 0;
    b.onGap(() => gaps++);
    const there = collect(b, 'user.changed');
    // End b's listening session from the server side (as a restart or a network cut would).
    const killed = await sql<{ n: number }>`
      select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
      where datname = current_database() and query = 'listen crm_bus' and pid <> pg_backend_pid()`.execute(
      databases[0].db,
    );
    expect(killed.rows[0].n).toBe(2); // a's and b's listeners
    await waitFor(async () => a.live && b.live && gaps > 0, 10_000);
    await a.publish('user.changed', { id: 42 }, { delivered: true });
    await waitFor(async () => there.got.length === 1, 5000);
    expect(there.got).toEqual([{ id: 42 }]);
    there.off();
  });
});
