import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from './database.ts';
import { NestedQueryError } from './tx-guard.ts';

// The guard belongs to the embedded database (one session, one lock), so this file always opens PGlite.
let database: Database;
beforeAll(async () => {
  database = await openDatabase({ url: 'memory://', dataDir: '.tmp' });
  await sql`create table t (n int)`.execute(database.db);
});
afterAll(async () => database?.close());

describe('transactions on the embedded database cannot deadlock', () => {
  it('a query on db inside a transaction fails at once with a clear error, and the transaction rolls back', async () => {
    const started = Date.now();
    const err = await database.db
      .transaction()
      .execute(async (tx) => {
        await tx
          .insertInto('t' as never)
          .values({ n: 1 } as never)
          .execute();
        await sql`select 1`.execute(database.db);
      })
      .catch((e) => e);
    expect(err).toBeInstanceOf(NestedQueryError);
    expect(String(err.message)).toMatch(/use the transaction \(`tx`\)/);
    expect(Date.now() - started).toBeLessThan(2000);
    const rows = await sql<{ n: number }>`select count(*)::int as n from t`.execute(database.db);
    expect(rows.rows[0].n).toBe(0);
  });

  it('nested transactions and raw statements on db inside a transaction fail the same way', async () => {
    const nested = await database.db
      .transaction()
      .execute(async () => database.db.transaction().execute(async () => 1))
      .catch((e) => e);
    expect(nested).toBeInstanceOf(NestedQueryError);
    const raw = await database.db
      .transaction()
      .execute(async () => database.executeSql('select 1'))
      .catch((e) => e);
    expect(raw).toBeInstanceOf(NestedQueryError);
  });

  it('queries through tx work, and work started inside the transaction may use db once it ended', async () => {
    let later: Promise<unknown> | undefined;
    await database.db.transaction().execute(async (tx) => {
      await tx
        .insertInto('t' as never)
        .values({ n: 2 } as never)
        .execute();
      later = new Promise((r) => setTimeout(r, 20)).then(() =>
        sql`select count(*)::int as n from t`.execute(database.db),
      );
    });
    const res = (await later) as { rows: Array<{ n: number }> };
    expect(res.rows[0].n).toBe(1);
    await database.db
      .transaction()
      .setIsolationLevel('serializable')
      .execute(async (tx) => {
        await sql`select 1`.execute(tx);
      });
  });
});
