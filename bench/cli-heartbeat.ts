/**
 * Benchmark: `POST /api/cli/heartbeat` (every arc command sends one) of the real server (`server/start.js` on the
 * embedded database, default logging) against a bare Fastify route doing the same work: parsing the same body,
 * running the same UPDATE (the CLI repository's `touchDevice`) on its own database of the same kind
 * (bench/lib/bare-sql-server.ts) and answering the same JSON; both real listening servers on 127.0.0.1 in their
 * own processes, driven by autocannon in this process. The ratio is then what the service adds over its SQL (JWT,
 * user row, hooks, schema, logging). Each request refreshes one of 50 known devices of one user.
 *
 *   npx tsx bench/cli-heartbeat.ts    (BENCH_DURATION seconds per run, default 5, in BENCH_ROUNDS alternating
 *                                      rounds of bare and real, default 3; BENCH_CONNECTIONS, default 50;
 *                                      DATABASE_URL: the real server uses this PostgreSQL database instead)
 */
import autocannon from 'autocannon';
import fs from 'node:fs';
import { benchLine, compareWithBare, startNode, startServiceAsAdmin, stop, tempDir } from './lib/util.ts';

const duration = Number(process.env.BENCH_DURATION ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const { real, token, close } = await startServiceAsAdmin('cli-heartbeat', process.env.BENCH_LOG_LEVEL ?? 'info');
let bare: Awaited<ReturnType<typeof startNode>> | undefined;
const bareDir = tempDir('cli-heartbeat-bare');
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
  bare = await startNode('bench/lib/bare-sql-server.ts', {
    BARE_BODY: answer,
    BARE_DATA_DIR: bareDir,
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
  });

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
  const r = await compareWithBare({
    title: `POST /api/cli/heartbeat, ${connections} connections, ${duration} s per run, ${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded'} database`,
    realLabel: 'CRM heartbeat (JWT, user row, update)',
    bareLabel: 'bare route, same UPDATE',
    realUrl: `${real.url}/api/cli/heartbeat`,
    bareUrl: `${bare.url}/api/cli/heartbeat`,
    duration,
    run,
  });
  benchLine('cli-heartbeat', { ...r, baseline: 'bare route, same UPDATE' });
} finally {
  if (bare) await stop(bare.proc);
  await close();
  fs.rmSync(bareDir, { recursive: true, force: true });
}
