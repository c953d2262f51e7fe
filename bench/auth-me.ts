/**
 * Benchmark (issue 2): authenticated `GET /api/auth/me` of the real server (`server/src/main.ts` on the
 * embedded database, default logging) against a bare Fastify route answering the same JSON, both real
 * listening servers on 127.0.0.1 in their own processes, driven by autocannon in this process.
 *
 *   npx tsx bench/auth-me.ts          (BENCH_DURATION seconds per run, default 10; BENCH_CONNECTIONS, default 50;
 *                                      BENCH_LOG_LEVEL for the real server, default info as in production;
 *                                      DATABASE_URL: the real server uses this PostgreSQL database instead)
 */
import fs from 'node:fs';
import autocannon from 'autocannon';
import { startNode, stop, table, tempDir } from './lib/util.ts';

const duration = Number(process.env.BENCH_DURATION ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const logLevel = process.env.BENCH_LOG_LEVEL ?? 'info';
const dataDir = tempDir('auth-me');
const admin = { email: 'bench-admin@example.com', password: 'bench passphrase 123' };

const real = await startNode('server/start.js', {
  DATA_DIR: dataDir,
  LOG_LEVEL: logLevel,
  BREACH_CHECK_URL: 'off',
  ADMIN_EMAIL: admin.email,
  ADMIN_PASSWORD: admin.password,
  ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
});
let bare: Awaited<ReturnType<typeof startNode>> | undefined;
try {
  const login = await fetch(`${real.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(admin),
  });
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${await login.text()}`);
  const { token } = (await login.json()) as { token: string };
  const headers = { authorization: `Bearer ${token}` };
  const me = await fetch(`${real.url}/api/auth/me`, { headers });
  const meText = await me.text();
  if (me.status !== 200) throw new Error(`GET /api/auth/me: ${me.status} ${meText}`);
  bare = await startNode('bench/lib/bare-server.ts', { BARE_BODY: meText });
  const bareText = await (await fetch(`${bare.url}/api/auth/me`)).text();
  if (bareText !== meText) throw new Error(`the bare route answers differently:\n${bareText}\n${meText}`);

  const run = async (url: string, seconds: number) => {
    const r = await autocannon({ url, connections, duration: seconds, headers });
    if (r.errors || r.timeouts || r.non2xx)
      throw new Error(`${url}: ${r.errors} errors, ${r.timeouts} timeouts, ${r.non2xx} non-2xx`);
    return r;
  };
  // Warm both up (JIT, connection pools), then measure each for `duration` seconds.
  await run(`${bare.url}/api/auth/me`, 2);
  await run(`${real.url}/api/auth/me`, 2);
  const b = await run(`${bare.url}/api/auth/me`, duration);
  const r = await run(`${real.url}/api/auth/me`, duration);

  console.log(
    `\nGET /api/auth/me, ${connections} connections, ${duration} s each, ${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded'} database, real server LOG_LEVEL=${logLevel}\n`,
  );
  console.log(
    table(
      ['server', 'req/s (avg)', 'p50 ms', 'p99 ms', 'requests'],
      [
        ['bare Fastify route', b.requests.average.toFixed(0), b.latency.p50, b.latency.p99, b.requests.total],
        [
          'CRM /api/auth/me (JWT + user row)',
          r.requests.average.toFixed(0),
          r.latency.p50,
          r.latency.p99,
          r.requests.total,
        ],
      ],
    ),
  );
  const ratio = r.requests.average / b.requests.average;
  console.log(`\nthroughput ratio real/bare: ${ratio.toFixed(2)} (aim >= 0.5)${ratio >= 0.5 ? '' : '  ← below aim'}`);
  console.log(`p99 latency ratio real/bare: ${(r.latency.p99 / Math.max(b.latency.p99, 1)).toFixed(2)}`);
} finally {
  if (bare) await stop(bare.proc);
  await stop(real.proc);
  fs.rmSync(dataDir, { recursive: true, force: true });
}
