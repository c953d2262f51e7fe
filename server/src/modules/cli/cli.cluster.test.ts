/**
 * Two instances on one database: the link stream served by one instance sees the confirmation made on the
 * other and hands out the token once; concurrent first check-ins on both record one cli_invocation. Runs on
 * PostgreSQL (TEST_DATABASE_URL).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildTestCluster, createUser, type TestInstance } from '../../../test/helpers.ts';

// Several instances share a PostgreSQL server (the embedded database belongs to one process).
const onPostgres = inject('dbKind') === 'postgres';
let cluster: Awaited<ReturnType<typeof buildTestCluster>>;
let a: TestInstance;
let b: TestInstance;

beforeAll(async () => {
  if (!onPostgres) return;
  cluster = await buildTestCluster(2, { env: { CLI_LINK_POLL_MS: '50', CLI_LINK_TIMEOUT_MS: '20000' } });
  [a, b] = cluster.instances;
});
afterAll(async () => {
  await cluster?.close();
});

const post = (base: string, p: string, body: unknown, token?: string) =>
  fetch(`${base}${p}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });

describe.skipIf(!onPostgres)('CLI across instances', () => {
  it('a link confirmed on one instance completes the stream on the other, once', async () => {
    const u = await createUser(a as any);
    const link = (await (await post(a.url, '/api/cli/link', {})).json()) as any;
    const streams = [b, a].map((inst) =>
      fetch(`${inst.url}/api/sse/cli-status?token=${encodeURIComponent(link.link_token)}`).then((r) => r.text()),
    );
    await new Promise((r) => setTimeout(r, 200));
    expect((await post(a.url, '/api/crm/cli/link/confirm', { code: link.code }, u.token)).status).toBe(200);
    const bodies = await Promise.all(streams);
    const linked = bodies.filter((t) => t.includes('event: linked'));
    expect(linked).toHaveLength(1);
    expect(bodies.filter((t) => t.includes('"reason":"used"'))).toHaveLength(1);
    const token = JSON.parse(/event: linked\ndata: (.*)\n/.exec(linked[0])![1]).token;
    const me = await fetch(`${a.url}/api/auth/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(((await me.json()) as any).id).toBe(u.id);
  });

  it('first check-ins from two devices on two instances at once record one cli_invocation', async () => {
    const u = await createUser(a as any);
    const beat = (inst: TestInstance, device: string) =>
      post(
        inst.url,
        '/api/cli/heartbeat',
        { device_id: device, hostname: 'h', platform: 'linux', version: '1.0.16' },
        u.token,
      );
    const res = await Promise.all([beat(a, 'one'), beat(b, 'two'), beat(a, 'three'), beat(b, 'four')]);
    expect(res.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const events = await a.db
      .selectFrom('activity_log')
      .select('id')
      .where('type', '=', 'cli_invocation')
      .where('user_id', '=', u.id)
      .execute();
    expect(events).toHaveLength(1);
  });
});
