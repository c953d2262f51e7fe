/**
 * Container output caps through the HTTP API (docs/configuration.md, Cloud sandbox caps): a terminal flooding
 * output gets at most its budget of lines stored and published (CLOUD_LOG_LINES_PER_S, in bursts of ten seconds'
 * worth, plus the notice of what was dropped), the table keeps at most about CLOUD_LOG_KEEP_LINES of the user's
 * lines, and another user's requests still answer meanwhile. The container runtime is a stand-in speaking the
 * runtime interface whose shell prints 50 000 lines on `flood`.
 */
import { sql } from 'kysely';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, buildTestApp, createUser, type TestApp } from '../../../test/helpers.ts';
import type { ContainerRuntime, ShellSession } from '../../providers/containers/index.ts';

const FLOOD_LINES = 50_000;
const PER_SECOND = 20;
const KEEP = 100;

/** A runtime whose containers are always running and whose shell floods its output when told `flood`. */
function floodRuntime(): ContainerRuntime {
  return {
    kind: 'process',
    check: async () => {},
    create: async (userId) => ({
      containerId: `flood-${userId}`,
      serverIp: '127.0.0.1',
      port: null,
      internalPort: null,
    }),
    inspect: async () => 'running',
    pause: async () => {},
    resume: async () => {},
    remove: async () => {},
    exec: async () => ({ code: 0, output: '', timedOut: false }),
    async shell(): Promise<ShellSession> {
      const dataFns: ((c: Buffer) => void)[] = [];
      const exitFns: ((c: number | null) => void)[] = [];
      const onData = (c: Buffer) => dataFns.forEach((fn) => fn(c));
      // A prompt, as a shell writes one first (the socket holds input until then).
      setTimeout(() => onData(Buffer.from('$ ')), 50);
      return {
        write(d) {
          if (!String(d).includes('flood')) return;
          let sent = 0;
          const burst = () => {
            const n = Math.min(1000, FLOOD_LINES - sent);
            onData(Buffer.from(Array.from({ length: n }, (_, i) => `line ${sent + i}\n`).join('')));
            sent += n;
            if (sent < FLOOD_LINES) setImmediate(burst);
            else onData(Buffer.from('FLOOD-DONE\n'));
          };
          burst();
        },
        resize() {},
        onData: (fn) => void dataFns.push(fn),
        onExit: (fn) => void exitFns.push(fn),
        kill: () => exitFns.forEach((fn) => fn(0)),
      };
    },
  };
}

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await buildTestApp({
    env: { CLOUD_LOG_LINES_PER_S: String(PER_SECOND), CLOUD_LOG_KEEP_LINES: String(KEEP) },
    overrides: { containers: floodRuntime() },
  });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `ws://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
});
afterAll(async () => t?.close());

describe('container output caps', () => {
  it('stores and publishes at most the budget of a flooding terminal; other users still answer', async () => {
    const flooder = await createUser(t, { plan: 'cloud' });
    const other = await createUser(t);
    expect((await api(t.app, 'POST', '/api/crm/cloud/provision', { token: flooder.token })).status).toBeLessThan(300);
    let published = 0;
    let notices = 0;
    const off = t.deps.bus.subscribe('cloud.log', (p) => {
      if (p.user !== flooder.id) return;
      published++;
      if (p.line.includes('not logged')) notices++;
    });

    const ws = new WebSocket(`${base}/api/crm/ws/cloud/${flooder.id}/terminal?token=${flooder.token}`);
    let received = '';
    ws.on('message', (d) => (received += d.toString()));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const started = Date.now();
    ws.send('flood\n');
    // Another user's requests answer while the flood runs.
    for (let i = 0; i < 5; i++)
      expect((await api(t.app, 'GET', '/api/auth/me', { token: other.token })).status).toBe(200);
    const until = Date.now() + 30_000;
    while (!received.includes('FLOOD-DONE') && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(received).toContain('FLOOD-DONE');
    ws.close();
    await new Promise((r) => setTimeout(r, 500));
    const elapsed = (Date.now() - started) / 1000;
    off();

    // The budget: ten seconds' worth at once, then PER_SECOND a second (the notices take a line's place).
    const budget = PER_SECOND * 10 + Math.ceil(PER_SECOND * elapsed) + 1;
    expect(published).toBeGreaterThan(0);
    expect(published).toBeLessThanOrEqual(budget);
    // The last batch is stored, then trimmed: on a busy machine the trim may still be under way.
    const storedNow = async () =>
      Number(
        (
          await sql<{
            n: string;
          }>`select count(*) as n from cloud_log_lines where user_id = ${flooder.id}`.execute(t.db)
        ).rows[0].n,
      );
    let stored = await storedNow();
    for (const settle = Date.now() + 10_000; stored > Math.ceil(KEEP * 1.1) && Date.now() < settle;) {
      await new Promise((r) => setTimeout(r, 100));
      stored = await storedNow();
    }
    expect(stored).toBeLessThanOrEqual(Math.ceil(KEEP * 1.1));
    // What was dropped is said (stored and published; on a slow machine the trim may have removed the stored one
    // since, under the newer lines).
    expect(notices).toBeGreaterThan(0);
  });
});
