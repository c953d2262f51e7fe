/**
 * A project name names one project across the service: the migration that renamed duplicates made per owner
 * before (keeping the oldest, recording each rename for its owner) and the unique index it adds. Runs on the
 * database of the suite (PGlite, or PostgreSQL with TEST_DATABASE_URL).
 */
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase } from '../../../test/helpers.ts';
import type { Database } from '../../db/database.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import { freeName } from '../../db/migrations/20261124_0100_unique_project_names.ts';

const MIGRATION = '20261124_0100_unique_project_names';

describe('freeName', () => {
  it('appends -2, -3, … skipping taken names, within 40 characters and without a trailing separator', () => {
    expect(freeName('shop', new Set(['shop']))).toBe('shop-2');
    expect(freeName('shop', new Set(['shop', 'shop-2', 'shop-3']))).toBe('shop-4');
    const long = `${'a'.repeat(39)}b`;
    expect(freeName(long, new Set([long]))).toBe(`${'a'.repeat(38)}-2`);
    const dash = `${'x'.repeat(37)}-yy`;
    expect(freeName(dash, new Set([dash]))).toBe(`${'x'.repeat(37)}-2`);
    const taken = new Set([long]);
    for (let n = 2; n <= 10; n++) freeName(long, taken);
    expect(freeName(long, taken)).toBe(`${'a'.repeat(37)}-11`);
    expect([...taken].every((n) => n.length <= 40)).toBe(true);
  });
});

describe(`migration ${MIGRATION}`, () => {
  let database: Database;
  let drop: () => Promise<void>;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(path.resolve('.tmp'), 'names-'));
    ({ database, drop } = await openTestDatabase(dataDir));
  });
  afterAll(async () => {
    await database?.close();
    await drop?.();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('renames duplicates (oldest keeps the name), records each rename, then refuses a duplicate', async () => {
    const { db } = database;
    // The schema before the migration: names unique per owner only.
    await sql`drop index projects_name_unique`.execute(db);
    await sql`alter table projects add constraint projects_owner_id_name_key unique (owner_id, name)`.execute(db);
    await db
      .deleteFrom('kysely_migration' as any)
      .where('name', '=', MIGRATION)
      .execute();

    const users: number[] = [];
    for (let i = 0; i < 4; i++) {
      const u = await db
        .insertInto('users')
        .values({
          email: `names-${i}@example.com`,
          password_hash: 'x',
          role: 'user',
          plan: 'free',
          email_verified: true,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      users.push(u.id);
    }
    const day = 86_400_000;
    const project = async (owner: number, name: string, ageDays: number) =>
      (
        await db
          .insertInto('projects')
          .values({ owner_id: owner, name, display_name: name, created_at: new Date(Date.now() - ageDays * day) })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id;
    const long = `${'a'.repeat(39)}b`;
    // Inserted newest first, so ids do not follow age: the oldest by created_at keeps the name.
    const shop3 = await project(users[2], 'shop', 1);
    const shop2 = await project(users[1], 'shop', 2);
    const shop1 = await project(users[0], 'shop', 3);
    const taken = await project(users[3], 'shop-2', 5); // a name already in use is skipped
    const long1 = await project(users[0], long, 4);
    const long2 = await project(users[1], long, 4); // same age: the lower id keeps it
    const alone = await project(users[3], 'alone', 1);

    expect(await migrateToLatest(db)).toEqual([MIGRATION]);

    const names = new Map(
      (await db.selectFrom('projects').select(['id', 'name']).execute()).map((r) => [r.id, r.name] as const),
    );
    expect(names.get(shop1)).toBe('shop');
    expect(names.get(shop2)).toBe('shop-3');
    expect(names.get(shop3)).toBe('shop-4');
    expect(names.get(taken)).toBe('shop-2');
    expect(names.get(long1)).toBe(long);
    expect(names.get(long2)).toBe(`${'a'.repeat(38)}-2`);
    expect(names.get(alone)).toBe('alone');

    const events = await db
      .selectFrom('activity_log')
      .select(['user_id', 'project_id', 'actor', 'payload'])
      .where('type', '=', 'project_renamed')
      .orderBy('id')
      .execute();
    expect(events).toEqual([
      {
        user_id: users[1],
        project_id: long2,
        actor: 'system',
        payload: { old_name: long, new_name: `${'a'.repeat(38)}-2`, reason: 'duplicate_name' },
      },
      {
        user_id: users[1],
        project_id: shop2,
        actor: 'system',
        payload: { old_name: 'shop', new_name: 'shop-3', reason: 'duplicate_name' },
      },
      {
        user_id: users[2],
        project_id: shop3,
        actor: 'system',
        payload: { old_name: 'shop', new_name: 'shop-4', reason: 'duplicate_name' },
      },
    ]);

    // The unique index: a second project of a taken name is refused by the database, whoever owns it.
    const dup = await project(users[3], 'shop', 0).catch((err: { code?: string }) => err.code);
    expect(dup).toBe('23505');
    expect(await migrateToLatest(db)).toEqual([]);
  });
});
