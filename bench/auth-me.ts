/**
 * Benchmark (issue 2): authenticated `GET /api/auth/me` of the real server (`server/src/main.ts` on the
 * embedded database, default logging) against a bare Fastify route answering the same JSON, both real
 * listening servers on 127.0.0.1 in their own processes, driven by autocannon in this process.
 *
 *   npx tsx bench/auth-me.ts          (BENCH_DURATION seconds per run, default 5, in BENCH_ROUNDS alternating
 *                                      rounds of bare and real, default 3; BENCH_CONNECTIONS, default 50;
 *                                      BENCH_LOG_LEVEL for the real server, default info as in production;
 *                                      DATABASE_URL: the real server uses this PostgreSQL database instead;
 *                                      LOG_FLUSH_MS: the real server's, e.g. 0 to write every log line at once)
 */
import autocannon from 'autocannon';
import { benchLine, compareWithBare, startNode, startServiceAsAdmin, stop } from './lib/util.ts';

const duration = Number(process.env.BENCH_DURATION ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const logLevel = process.env.BENCH_LOG_LEVEL ?? 'info';
const { real, token, close } = await startServiceAsAdmin('auth-me', logLevel);
let bare: Awaited<ReturnType<typeof startNode>> | undefined;
try {
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
  const r = await compareWithBare({
    title: `GET /api/auth/me, ${connections} connections, ${duration} s per run, ${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded'} database, real server LOG_LEVEL=${logLevel}${process.env.LOG_FLUSH_MS ? ` LOG_FLUSH_MS=${process.env.LOG_FLUSH_MS}` : ''}`,
    realLabel: 'CRM /api/auth/me (JWT + user row)',
    realUrl: `${real.url}/api/auth/me`,
    bareUrl: `${bare.url}/api/auth/me`,
    duration,
    run,
  });
  console.log(`aim: >= 0.6${r.ratio >= 0.6 ? '' : '  ← below aim'}, Node ${process.version}`);
  benchLine('auth-me', { ...r, baseline: 'bare route, same JSON, no SQL', aim: '>= 0.6' });
} finally {
  if (bare) await stop(bare.proc);
  await close();
}
