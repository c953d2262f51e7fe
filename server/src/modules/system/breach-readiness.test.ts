/**
 * The breached-password check fails open, visibly: with the range API down or too slow,
 * registration still succeeds, the log warns once per period, and /readyz stays 200 with
 * `checks.breach = 'degraded'` until the API answers again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import pino from 'pino';
import { api, buildTestApp, createUser, type TestApp, uniqueEmail } from '../../../test/helpers.ts';
import { startRangeApiStandIn } from '../../../test/standins/range-api.ts';
import { loggerOptions } from '../../http/logging.ts';
import { createBreachChecker, type BreachCheckerOptions } from '../../providers/breach/breach.ts';

/** The server's pino options writing into memory; `lines()` gives the parsed records. */
function memoryLogger() {
  const out: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      out.push(...chunk.toString().split('\n').filter(Boolean));
      cb();
    },
  });
  return { log: pino(loggerOptions('info'), stream), lines: () => out.map((l) => JSON.parse(l)) };
}

const cleanup: Array<() => Promise<void>> = [];
let ip = 0;
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** An app whose breach check talks to `url` with the given options, logging into `mem`. */
async function appWith(url: string, mem: ReturnType<typeof memoryLogger>, opts: BreachCheckerOptions = {}) {
  const t: TestApp = await buildTestApp({
    env: { BREACH_CHECK_URL: url, TRUST_PROXY: '1' },
    logger: mem.log,
    overrides: { breach: createBreachChecker(url, { log: mem.log, ...opts }) },
  });
  cleanup.push(() => t.close());
  const admin = await createUser(t, { role: 'admin' });
  const register = async () => {
    const inv = await api(t.app, 'POST', '/api/crm/admin/invites', { token: admin.token, body: { count: 1 } });
    expect(inv.status).toBe(200);
    // A fresh client address each time: registration is rate-limited per address.
    return api(t.app, 'POST', '/api/auth/register', {
      body: { email: uniqueEmail('breach'), password: 'a fine passphrase', invite_code: inv.body.codes[0] },
      headers: { 'x-forwarded-for': `10.77.0.${++ip}` },
    });
  };
  const breachStatus = async () => {
    const res = await api(t.app, 'GET', '/readyz');
    expect(res.status).toBe(200);
    expect(res.body.ok).toBe(true);
    return res.body.checks.breach as string;
  };
  return { t, register, breachStatus };
}

const warnings = (mem: ReturnType<typeof memoryLogger>) =>
  mem.lines().filter((l) => l.level === 40 && /breached-password check unavailable/.test(l.msg));

describe('breached-password check when the range API is down', () => {
  it('registers anyway, warns once per period, reports degraded and recovers when the API answers again', async () => {
    // A stand-in that was running and is now stopped: its port refuses connections.
    const first = await startRangeApiStandIn([]);
    const port = Number(new URL(first.url).port);
    await first.close();
    const mem = memoryLogger();
    const { register, breachStatus } = await appWith(first.url, mem, { recheckMs: 200 });

    expect(await breachStatus()).toBe('ok'); // nothing checked yet
    for (let i = 0; i < 3; i++) {
      const res = await register();
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    expect(await breachStatus()).toBe('degraded');
    const warned = warnings(mem);
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ breach_check_url: first.url, reason: 'ECONNREFUSED', passwords_unchecked: 1 });

    // The API comes back at the same address: a status read re-checks it in the background.
    const back = await startRangeApiStandIn([], { port });
    cleanup.push(() => back.close());
    const deadline = Date.now() + 10_000;
    let status = await breachStatus();
    while (status !== 'ok' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      status = await breachStatus();
    }
    expect(status).toBe('ok');
    expect(back.requests).toContain('/range/00000');
    expect(mem.lines().some((l) => l.level === 30 && /available again/.test(l.msg))).toBe(true);
    expect((await register()).status).toBe(201);
    expect(warnings(mem)).toHaveLength(1);
  });

  it('treats an API slower than the time limit as down: registration is not held up, one warning', async () => {
    // An API that answers only after 20 s: two registrations well under that were not held up by it (the bound
    // leaves room for a loaded machine: two password hashes and two registrations, not the API's delay).
    const slow = await startRangeApiStandIn([], { delayMs: 20_000 });
    cleanup.push(() => slow.close());
    const mem = memoryLogger();
    const { register, breachStatus } = await appWith(slow.url, mem, { timeoutMs: 300, recheckMs: 60_000 });
    const started = Date.now();
    expect((await register()).status).toBe(201);
    expect((await register()).status).toBe(201);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await breachStatus()).toBe('degraded');
    expect(warnings(mem)).toHaveLength(1);
    expect(warnings(mem)[0].reason).toBe('no answer within 300 ms');
  });

  it('reports off when the check is disabled', async () => {
    const mem = memoryLogger();
    const t = await buildTestApp({ logger: mem.log });
    cleanup.push(() => t.close());
    const res = await api(t.app, 'GET', '/readyz');
    expect(res.body.checks).toEqual({ breach: 'off' });
  });
});
