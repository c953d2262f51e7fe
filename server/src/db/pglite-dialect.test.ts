import { PGlite } from '@electric-sql/pglite';
import { Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Lock, PGLITE_SESSION_PARAMS, PGliteDialect, plannerSetting } from './pglite-dialect.ts';

// The dialect of the embedded database: this file always opens PGlite.
let pg: PGlite;
let db: Kysely<any>;
beforeAll(async () => {
  pg = await PGlite.create({ startParams: [...PGlite.defaultStartParams, ...PGLITE_SESSION_PARAMS] });
  db = new Kysely<any>({ dialect: new PGliteDialect(pg, new Lock()) });
  await sql`create table t (id serial primary key, a text, n int8, j jsonb, at timestamptz, tags text[], b bool)`.execute(
    db,
  );
});
afterAll(async () => {
  await db.destroy();
  await pg.close();
});

const row = { a: 'x', n: 7, j: { k: [1, 'two'] }, at: new Date('2026-11-28T10:00:00.000Z'), tags: ['p', 'q'], b: true };

describe('statements on the embedded database (prepared, one call each)', () => {
  it('answer what PGlite’s own query answers: parameters serialized and columns parsed by their types', async () => {
    for (let i = 0; i < 3; i++) {
      // The first run prepares the statement, the next ones reuse it.
      const ins = await db.insertInto('t').values(row).returning(['id', 'a', 'n', 'j', 'at', 'tags', 'b']).execute();
      const direct = await pg.query('select id, a, n, j, at, tags, b from t where id = $1', [ins[0].id]);
      expect(ins[0]).toEqual(direct.rows[0]);
      expect(ins[0]).toMatchObject({ ...row, n: 7 });
    }
    const upd = await db.updateTable('t').set({ a: null }).where('a', '=', 'x').executeTakeFirst();
    expect(upd.numUpdatedRows).toBe(3n);
    const none = await db.selectFrom('t').selectAll().where('id', '=', -1).execute();
    expect(none).toEqual([]);
  });

  it('fail with the database’s error and go on (inside and outside a transaction)', async () => {
    const dup = await db
      .insertInto('t')
      .values({ id: 1 })
      .execute()
      .catch((e) => e);
    expect(dup.code).toBe('23505');
    const tx = await db
      .transaction()
      .execute(async (trx) => {
        await trx.insertInto('t').values({ a: 'in tx' }).execute();
        await trx.insertInto('t').values({ id: 1 }).execute();
      })
      .catch((e) => e);
    expect(tx.code).toBe('23505');
    const left = await db.selectFrom('t').select('id').where('a', '=', 'in tx').execute();
    expect(left).toEqual([]);
  });

  it('follow a table changed under a prepared `select *` (DDL through the dialect or beside it)', async () => {
    const all = () => db.selectFrom('t').selectAll().where('id', '=', 1).execute();
    expect(Object.keys((await all())[0])).not.toContain('extra');
    await sql`alter table t add column extra int default 5`.execute(db);
    expect((await all())[0].extra).toBe(5);
    // Beside the dialect (another user of the same session): the stale plan is prepared again.
    await pg.exec('alter table t add column extra2 int default 6');
    expect((await all())[0].extra2).toBe(6);
  });

  it('answer as PGlite’s own query after a rolled-back transaction prepared them, an index and a setting', async () => {
    // The sequences of the semantic index beside its background indexing (knowledge.repo.ts): a statement first
    // prepared inside a transaction that rolls back, an index created beside the dialect, a read under `set local`.
    await sql`create table k (id serial primary key, doc text, n int)`.execute(db);
    const near = (q: Kysely<any>) =>
      q.selectFrom('k').select(['id', 'doc']).where('n', '<=', 9).orderBy('n', 'desc').orderBy('id').limit(3).execute();
    const plain = async () =>
      (await pg.query('select "id", "doc" from "k" where "n" <= $1 order by "n" desc, "id" limit $2', [9, 3])).rows;
    const rolledBack = await db
      .transaction()
      .execute(async (trx) => {
        await trx.insertInto('k').values({ doc: 'rolled back', n: 8 }).execute();
        expect(await near(trx)).toHaveLength(1);
        throw new Error('roll back');
      })
      .catch((e) => e);
    expect(rolledBack.message).toBe('roll back');
    expect(await near(db)).toEqual([]);
    for (let i = 0; i < 5; i++)
      await db
        .insertInto('k')
        .values({ doc: `d${i}`, n: i })
        .execute();
    expect(await near(db)).toEqual(await plain());
    await pg.exec('create index k_n on k (n)');
    await db.insertInto('k').values({ doc: 'after the index', n: 7 }).execute();
    expect(await near(db)).toEqual(await plain());
    const underSetting = await db.transaction().execute(async (trx) => {
      await sql`set local enable_indexscan = off`.execute(trx);
      return near(trx);
    });
    expect(underSetting).toEqual(await plain());
    expect(underSetting[0].doc).toBe('after the index');
  });

  it('find a partial unique index by `on conflict … where` past the five executions of custom plans', async () => {
    await sql`create table w (id serial primary key, email text, status text default 'open')`.execute(db);
    await sql`create unique index w_open on w (email) where status = 'open'`.execute(db);
    // Past the five executions after which PostgreSQL may switch a prepared statement to a generic plan.
    for (let i = 0; i < 8; i++) {
      await db
        .insertInto('w')
        .values({ email: `a${i % 2}@x` })
        .onConflict((oc) => oc.column('email').where('status', '=', 'open').doNothing())
        .execute();
    }
    expect((await db.selectFrom('w').select('id').execute()).length).toBe(2);
  });

  it('keep a generic plan after five executions, and are prepared again after a minute (plans follow the tables)', async () => {
    const text = 'select "id" from "t" where "id" = $1';
    const prepared = async () =>
      (
        await pg.query<{ name: string; generic_plans: number; custom_plans: number }>(
          'select name, generic_plans::int, custom_plans::int from pg_prepared_statements where statement = $1',
          [text],
        )
      ).rows;
    vi.useFakeTimers({ toFake: ['performance'] });
    try {
      for (let i = 0; i < 8; i++) await db.selectFrom('t').select('id').where('id', '=', 1).execute();
      const [first] = await prepared();
      expect(first.custom_plans).toBe(5);
      expect(first.generic_plans).toBe(3);
      vi.advanceTimersByTime(61_000);
      await db.selectFrom('t').select('id').where('id', '=', 1).execute();
      const again = await prepared();
      // The old statement closed, a new one planned for its parameters again.
      expect(again).toHaveLength(1);
      expect(again[0].name).not.toBe(first.name);
      expect(again[0]).toMatchObject({ custom_plans: 1, generic_plans: 0 });
    } finally {
      vi.useRealTimers();
    }
  });

  it('are planned with their parameters after a setting the planner reads, until the transaction ends', async () => {
    const text = 'select "id" from "t" where "id" > $1 order by "id" limit $2';
    const plans = async () =>
      (
        await pg.query<{ generic_plans: number; custom_plans: number }>(
          'select generic_plans::int, custom_plans::int from pg_prepared_statements where statement = $1',
          [text],
        )
      ).rows[0];
    const read = (q: Kysely<any>) =>
      q.selectFrom('t').select('id').where('id', '>', 0).orderBy('id').limit(2).execute();
    for (let i = 0; i < 7; i++) await read(db);
    const before = await plans();
    expect(before.generic_plans).toBeGreaterThan(0);
    // A generic plan made with index scans on would not see them turned off.
    await db.transaction().execute(async (trx) => {
      await sql`set local enable_indexscan = off`.execute(trx);
      await read(trx);
      await sql`select set_config('enable_sort', 'off', true)`.execute(trx);
      await read(trx);
    });
    expect(await plans()).toEqual({ ...before, custom_plans: before.custom_plans + 2 });
    // After the transaction, the generic plan again; a setting that does not change plans keeps it.
    await db.transaction().execute(async (trx) => {
      await sql`set local hnsw.ef_search = 100`.execute(trx);
      await read(trx);
    });
    await read(db);
    expect(await plans()).toEqual({
      ...before,
      generic_plans: before.generic_plans + 2,
      custom_plans: before.custom_plans + 2,
    });
  });

  it('tell the settings the planner reads from those it does not', () => {
    expect(plannerSetting('set local enable_indexscan = off', [])).toBe('transaction');
    expect(plannerSetting('SET enable_seqscan TO off', [])).toBe('session');
    expect(plannerSetting('set session random_page_cost = 1', [])).toBe('session');
    expect(plannerSetting('set local hnsw.ef_search = 200', [])).toBeNull();
    expect(plannerSetting("SET pgboss.test_clock = 'on'", [])).toBeNull();
    expect(plannerSetting('set transaction isolation level serializable', [])).toBeNull();
    expect(plannerSetting('reset enable_seqscan', [])).toBe('session');
    expect(
      plannerSetting("select set_config('enable_bitmapscan', 'off', true), set_config('enable_sort', 'off', true)", []),
    ).toBe('transaction');
    expect(plannerSetting("select set_config('work_mem', '64MB', false)", [])).toBe('session');
    expect(plannerSetting('select set_config($1, $2::text, true)', ['statement_timeout', '1000'])).toBeNull();
    expect(plannerSetting('select set_config($1, $2::text, $3)', ['enable_sort', 'off', true])).toBe('transaction');
    expect(plannerSetting('select 1', [])).toBeNull();
  });

  it('keep a bounded number of statements prepared', async () => {
    for (let i = 0; i < 300; i++) {
      const ids = Array.from({ length: i + 1 }, (_, k) => k + 1);
      await db.selectFrom('t').select('id').where('id', 'in', ids).execute();
    }
    const prepared = await pg.query<{ n: number }>('select count(*)::int as n from pg_prepared_statements');
    expect(prepared.rows[0].n).toBeLessThanOrEqual(257);
    expect((await db.selectFrom('t').select('id').where('id', '=', 1).execute()).length).toBe(1);
  });
});
