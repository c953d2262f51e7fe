/**
 * Crash-recovery benchmark: how long after a `kill -9` every agent run is terminal again.
 *
 * The real service (`node server/start.js`, embedded database in a fresh DATA_DIR, or DATABASE_URL when set) with
 * the local LLM stand-in answering each model call after CRASH_CALL_MS (default 1500 ms; two calls per run: a
 * create_issue tool call, then the reply). Each cycle sends CRASH_MESSAGES messages (default 20) to CRASH_WORKERS
 * workers (default 5), waits a random 0.5–1.5 s (runs in flight), kills the process group with SIGKILL, starts
 * the service again on the same data and polls the runs until none is queued or running. Prints per cycle the
 * time from the kill to the restarted service being ready and to every run being terminal, then the median and
 * worst of the latter, and the runs' final states.
 *
 *   npx tsx bench/crash-recovery.ts      (CRASH_CYCLES, default 3; CRASH_TIMEOUT_S per cycle, default 240;
 *                                        CRASH_KEEP=1 keeps DATA_DIR and its service.log)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startLlmStandIn } from '../server/test/standins/llm.ts';
import { client, startService, type ServiceProcess } from '../server/test/service-process.ts';
import { median, table, benchLine } from './lib/util.ts';

const cycles = Number(process.env.CRASH_CYCLES ?? 3);
const perCycle = Number(process.env.CRASH_MESSAGES ?? 20);
const workers = Number(process.env.CRASH_WORKERS ?? 5);
const callMs = Number(process.env.CRASH_CALL_MS ?? 1500);
const timeoutMs = Number(process.env.CRASH_TIMEOUT_S ?? 240) * 1000;

const llm = await startLlmStandIn({
  responder: (req) => {
    const last = req.body.messages?.at(-1);
    const afterTool = Array.isArray(last?.content) && last.content.some((b: any) => b.type === 'tool_result');
    return afterTool
      ? { delayMs: callMs, content: [{ type: 'text', text: 'Filed it.' }] }
      : { delayMs: callMs, content: [{ type: 'tool_use', name: 'create_issue', input: { title: 'From the bench' } }] };
  },
});
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'crm-bench-crash-'));
const logFile = path.join(dataDir, 'service.log');
const env = {
  LLM_PROVIDER: 'anthropic',
  LLM_BASE_URL: llm.anthropicUrl,
  ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
};
let svc: ServiceProcess = await startService(dataDir, logFile, env);
const port = svc.port;
const api = client(() => svc.url);
const rows: Array<Array<string | number>> = [];
const recoveries: number[] = [];
try {
  await api.login();
  const ids = await api.setup('bench-crash', workers);
  for (let c = 1; c <= cycles; c++) {
    for (let i = 0; i < perCycle; i++) await api.message('bench-crash', ids[i % ids.length], `cycle ${c} message ${i}`);
    await new Promise((r) => setTimeout(r, 500 + Math.random() * 1000));
    const before = await api.runs('bench-crash');
    const inFlight = before.filter((r) => r.status === 'running').length;
    const killedAt = performance.now();
    await svc.kill9();
    svc = await startService(dataDir, logFile, env, { port });
    const readyMs = performance.now() - killedAt;
    await api.login();
    let live = -1;
    for (;;) {
      const runs = await api.runs('bench-crash');
      live = runs.filter((r) => r.status === 'queued' || r.status === 'running').length;
      if (!live || performance.now() - killedAt > timeoutMs) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const ms = performance.now() - killedAt;
    if (!live) recoveries.push(ms);
    rows.push([c, inFlight, Math.round(readyMs), live ? `> ${Math.round(ms)} (${live} left)` : Math.round(ms)]);
    console.log(
      `cycle ${c}: ${inFlight} running at the kill, ready after ${Math.round(readyMs)} ms, terminal after ${Math.round(ms)} ms`,
    );
  }
  const runs = await api.runs('bench-crash');
  const states = new Map<string, number>();
  for (const r of runs) {
    const k = r.status === 'failed' ? `failed (${r.error})` : r.status;
    states.set(k, (states.get(k) ?? 0) + 1);
  }
  console.log(
    `\n${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded database'}, ${workers} workers, ${perCycle} messages per cycle, model calls of ${callMs} ms\n`,
  );
  console.log(table(['cycle', 'running at kill', 'kill → ready ms', 'kill → all runs terminal ms'], rows));
  if (recoveries.length)
    console.log(
      `\nkill → every run terminal: median ${Math.round(median(recoveries))} ms, worst ${Math.round(Math.max(...recoveries))} ms (${recoveries.length} of ${cycles} cycles recovered within ${timeoutMs / 1000} s)`,
    );
  console.log(`runs: ${[...states].map(([k, n]) => `${k} ${n}`).join(', ')}; model calls ${llm.modelCalls().length}`);
  benchLine('crash-recovery', {
    recovery_median_ms: recoveries.length ? Math.round(median(recoveries)) : null,
    recovery_worst_ms: recoveries.length ? Math.round(Math.max(...recoveries)) : null,
    recovered: `${recoveries.length}/${cycles}`,
    baseline: 'none (kill -9 to every run terminal)',
  });
} finally {
  await svc.term();
  await llm.close();
  if (process.env.CRASH_KEEP) console.log(`kept ${dataDir}`);
  else fs.rmSync(dataDir, { recursive: true, force: true });
}
