/**
 * Benchmark: `POST /api/cli/heartbeat` (every arc command sends one) of the real server (`server/start.js` on the
 * embedded database, default logging) against a bare Fastify route parsing the same body and answering the same
 * JSON, both real listening servers on 127.0.0.1 in their own processes, driven by autocannon in this process.
 * Each request refreshes one of 50 known devices of one user (one update; a new device takes the user's lock).
 *
 *   npx tsx bench/cli-heartbeat.ts    (BENCH_DURATION seconds per run, default 10; BENCH_CONNECTIONS, default 50;
 *                                      DATABASE_URL: the real server uses this PostgreSQL database instead)
 */
import autocannon from 'autocannon';
import { compareWithBare, startNode, startServiceAsAdmin, stop } from './lib/util.ts';

const duration = Number(process.env.BENCH_DURATION ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const { real, token, close } = await startServiceAsAdmin('cli-heartbeat', process.env.BENCH_LOG_LEVEL ?? 'info');
let bare: Awaited<ReturnType<typeof startNode>> | undefined;
try {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-arc-version': '1.0.16' };
  const body = (i: number) =>
    JSON.stringify({
      device_id: `device-${i % 50}`,
      hostname: 'bench',
      platform: 'linux',
      version: '1.0.16',
      project: null,
    });
  const first = await fetch(`${real.url}/api/cli/heartbeat`, { method: 'POST', headers, body: body(0) });
  const answer = await first.text();
  if (first.status !== 200) throw new Error(`POST /api/cli/heartbeat: ${first.status} ${answer}`);
  bare = await startNode('bench/lib/bare-server.ts', { BARE_BODY: answer });

  const run = async (url: string, seconds: number) => {
    let n = 0;
    const r = await autocannon({
      url,
      method: 'POST',
      connections,
      duration: seconds,
      headers,
      requests: [{ setupRequest: (req: any) => ({ ...req, body: body(n++) }) }],
    });
    if (r.errors || r.timeouts || r.non2xx)
      throw new Error(`${url}: ${r.errors} errors, ${r.timeouts} timeouts, ${r.non2xx} non-2xx`);
    return r;
  };
  await compareWithBare({
    title: `POST /api/cli/heartbeat, ${connections} connections, ${duration} s each, ${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded'} database`,
    realLabel: 'CRM heartbeat (JWT, user row, update)',
    realUrl: `${real.url}/api/cli/heartbeat`,
    bareUrl: `${bare.url}/api/cli/heartbeat`,
    duration,
    run,
  });
} finally {
  if (bare) await stop(bare.proc);
  await close();
}
