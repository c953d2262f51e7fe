/**
 * Baseline of bench/cli-heartbeat.ts that does the same database work: a bare Fastify route (no auth hook, no
 * schema, no rate limit, no logging) parsing the same JSON body and running the CLI repository's own refresh of a
 * known device (`touchDevice`: one UPDATE of `cli_devices`) on its own database of the same kind, then answering
 * the same JSON. The database: embedded PGlite in BARE_DATA_DIR (migrated, like the service's), or DATABASE_URL.
 * One user (id printed nowhere) with the devices `device-0` … `device-{BARE_DEVICES-1}` is made at start.
 */
import fs from 'node:fs';
import Fastify from 'fastify';
import { openDatabase } from '../../server/src/db/database.ts';
import { migrateToLatest } from '../../server/src/db/migrate.ts';
import { createCliRepo } from '../../server/src/modules/cli/cli.repo.ts';

const body = JSON.parse(process.env.BARE_BODY ?? '{}');
const dataDir = process.env.BARE_DATA_DIR!;
fs.mkdirSync(dataDir, { recursive: true });
const database = await openDatabase({ url: process.env.DATABASE_URL, dataDir });
await migrateToLatest(database.db);
const email = `bare-${process.pid}-${Date.now()}@example.com`;
const user = await database.db
  .insertInto('users')
  .values({ email, password_hash: 'x' } as never)
  .returning('id')
  .executeTakeFirstOrThrow();
const repo = createCliRepo(database.db);
const devices = Number(process.env.BARE_DEVICES ?? 50);
for (let i = 0; i < devices; i++) {
  const device = { userId: user.id, deviceId: `device-${i}`, hostname: 'bench', platform: 'linux', version: '1.0.16' };
  await repo.upsertDevice(database.db, { ...device, project: null });
}

const app = Fastify({ logger: false });
app.get('/readyz', async () => ({ ok: true }));
app.post('/api/cli/heartbeat', async (req) => {
  const b = req.body as { device_id: string; hostname: string; platform: string; version: string; project: null };
  const known = await repo.touchDevice({
    userId: user.id,
    deviceId: b.device_id,
    hostname: b.hostname,
    platform: b.platform,
    version: b.version,
    project: b.project ?? null,
  });
  if (!known) throw new Error(`unknown device ${b.device_id}`);
  return body;
});
await app.listen({ port: Number(process.env.PORT), host: process.env.HOST ?? '127.0.0.1' });
const close = () =>
  void app
    .close()
    .then(() => database.db.deleteFrom('users').where('id', '=', user.id).execute())
    .then(() => database.close())
    .then(() => process.exit(0));
process.on('SIGTERM', close);
process.on('SIGINT', close);
