/**
 * Benchmark: one tenant abuses the shared machine while another works. The real service (`server/start.js`,
 * embedded database) runs with the `process` cloud runtime; the abusing tenant (plan `cloud`, an 8 MiB storage quota)
 * fork-bombs its sandbox, floods its terminal with `yes` and keeps uploading 2 MiB files into its quota (and past
 * it); meanwhile the other tenant's `GET /api/auth/me` (autocannon, p99) and chat runs (`POST …/message` until the
 * run succeeded, against the LLM stand-in the other benches use) are measured — and the same figures with no abuse,
 * in the same run, give the ratios. Where the sandbox caps cannot be enforced (no root, no writable cgroup
 * controllers, bubblewrap too old) the fork bomb and the terminal flood are skipped with the reason printed.
 *
 *   npx tsx bench/abuse.ts           (BENCH_DURATION seconds per phase, default 15; BENCH_CONNECTIONS, default 10)
 */
import fs from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import WebSocket from 'ws';
import { startLlmStandIn } from '../server/test/standins/llm.ts';
import { ROOT, startNode, stop, table, benchLine } from './lib/util.ts';

const duration = Number(process.env.BENCH_DURATION ?? 15);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
/** The abuser's quota (MiB): small, so it is reached within the first seconds and the refusals go on after. */
const QUOTA_MB = 8;

const llm = await startLlmStandIn({ responder: () => ({ content: [{ type: 'text', text: 'Done.' }] }) });
// DATA_DIR under the checkout's .tmp (as the tests), never under a folder every sandbox sees.
fs.mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
const dataDir = fs.mkdtempSync(path.join(ROOT, '.tmp', 'bench-abuse-'));
const admin = { email: 'bench-admin@example.com', password: 'bench passphrase 123' };
const real = await startNode('server/start.js', {
  DATA_DIR: dataDir,
  LOG_LEVEL: 'warn',
  BREACH_CHECK_URL: 'off',
  ADMIN_EMAIL: admin.email,
  ADMIN_PASSWORD: admin.password,
  LLM_BASE_URL: llm.anthropicUrl,
  CONTAINER_RUNTIME: 'process',
  STORAGE_QUOTAS_MB: `cloud=${QUOTA_MB}`,
  // The abuse is measured, not throttled away before it reaches the service.
  RATE_LIMIT_UPLOADS: 'off',
  RATE_LIMIT_MESSAGES: 'off',
});
const url = real.url;

async function call(method: string, p: string, token?: string, body?: unknown) {
  const res = await fetch(`${url}${p}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
const must = async (r: Promise<{ status: number; body: any }>, what: string) => {
  const x = await r;
  if (x.status >= 300) throw new Error(`${what}: ${x.status} ${JSON.stringify(x.body)}`);
  return x.body;
};

const sockets: WebSocket[] = [];
let abusing = false;
let uploadsDone = 0;
let uploadsRefused = 0;
let quotaAnswer: any = null;
let cloudSkipped = '';
try {
  const adminToken = (await must(call('POST', '/api/auth/login', undefined, admin), 'admin login')).token;
  const user = async (name: string, plan: string) => {
    const email = `${name}@example.com`;
    const password = 'bench passphrase 123';
    await must(
      call('POST', '/api/crm/admin/users', adminToken, { email, password, plan, email_verified: true }),
      `create ${name}`,
    );
    return (await must(call('POST', '/api/auth/login', undefined, { email, password }), `login ${name}`))
      .token as string;
  };
  const victim = await user('victim', 'max');
  const abuser = await user('abuser', 'cloud');
  await must(call('PUT', '/api/crm/account/settings', victim, { llm_key: 'sk-ant-bench-key-0123456789' }), 'llm key');
  const vName: string = (
    await must(
      call('POST', '/api/crm/projects/create', victim, { displayName: 'Victim', projectName: 'victim' }),
      'project',
    )
  ).project.name;
  const worker = await must(
    call('POST', `/api/crm/projects/${vName}/workers`, victim, { label: 'w', model: 'claude-haiku-4-5' }),
    'worker',
  );
  const workerId: number = worker.id;
  const aName: string = (
    await must(
      call('POST', '/api/crm/projects/create', abuser, { displayName: 'Abuse', projectName: 'abuse' }),
      'project',
    )
  ).project.name;

  /** One chat run of the victim: message accepted → run succeeded (ms). */
  const chatRun = async () => {
    const t0 = performance.now();
    const m = await must(
      call('POST', `/api/crm/projects/${vName}/message`, victim, { worker_id: workerId, text: 'hello' }),
      'message',
    );
    const id = m.run_ids[0];
    for (;;) {
      const r = await must(call('GET', `/api/crm/projects/${vName}/runs/${id}`, victim), 'run');
      const status = r.status;
      if (status === 'succeeded') return performance.now() - t0;
      if (status === 'failed' || status === 'cancelled') throw new Error(`run ${status}: ${JSON.stringify(r)}`);
      await new Promise((res) => setTimeout(res, 10));
    }
  };
  const q = (xs: number[], p: number) => {
    const a = [...xs].sort((x, y) => x - y);
    return a[Math.max(0, Math.ceil((p / 100) * a.length) - 1)] ?? NaN;
  };
  /** The victim's figures over `duration` seconds: /api/auth/me under load and chat runs one after another. */
  const measure = async () => {
    const runs: number[] = [];
    const until = Date.now() + duration * 1000;
    const chats = (async () => {
      while (Date.now() < until) runs.push(await chatRun());
    })();
    const me = await autocannon({
      url: `${url}/api/auth/me`,
      connections,
      duration,
      headers: { authorization: `Bearer ${victim}` },
    });
    await chats;
    if (me.errors || me.timeouts || me.non2xx)
      throw new Error(`/api/auth/me: ${me.errors} errors, ${me.timeouts} timeouts, ${me.non2xx} non-2xx`);
    return {
      meP99: me.latency.p99,
      meRps: me.requests.average,
      chatP50: q(runs, 50),
      chatP99: q(runs, 99),
      runs: runs.length,
    };
  };

  await chatRun(); // warm-up
  const base = await measure();

  // The abuse.
  abusing = true;
  const prov = await call('POST', '/api/crm/cloud/provision', abuser);
  if (prov.status >= 300) cloudSkipped = `provision answered ${prov.status} ${prov.body?.error}: ${prov.body?.message}`;
  else {
    const abuserId = (await must(call('GET', '/api/auth/me', abuser), 'me')).chat_id;
    const terminal = (command: string) => {
      const ws = new WebSocket(`${url.replace('http', 'ws')}/api/crm/ws/cloud/${abuserId}/terminal?token=${abuser}`);
      ws.on('error', () => {});
      ws.on('message', () => {});
      ws.once('open', () => ws.send(command));
      sockets.push(ws);
    };
    terminal('yes\n'); // the terminal flood
    await new Promise((r) => setTimeout(r, 500));
    terminal('f(){ f|f& }; f\n'); // the fork bomb, under the same per-user caps
  }
  const chunk = Buffer.alloc(2 * 1024 * 1024, 120);
  const filler = (async () => {
    for (let i = 0; abusing; i++) {
      const form = new FormData();
      form.append('file', new Blob([chunk]), `fill-${i}.bin`);
      const res = await fetch(`${url}/api/crm/projects/${aName}/files/upload`, {
        method: 'POST',
        headers: { authorization: `Bearer ${abuser}` },
        body: form,
      });
      const body = await res.json();
      if (res.status === 201) uploadsDone++;
      else {
        uploadsRefused++;
        quotaAnswer ??= { status: res.status, ...body };
      }
    }
  })();
  await new Promise((r) => setTimeout(r, 1000));
  /** Processes of the abuser's sandbox uid (1500000000 + user id), sampled during the abuse. */
  const abuserUid = 1_500_000_000 + Number((await must(call('GET', '/api/auth/me', abuser), 'me')).id);
  let sandboxProcs = 0;
  const sampler = setInterval(() => {
    let n = 0;
    for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)))
      try {
        if (new RegExp(`^Uid:\\s+${abuserUid}\\s`, 'm').test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))) n++;
      } catch {
        /* gone */
      }
    sandboxProcs = Math.max(sandboxProcs, n);
  }, 1000);
  const abused = await measure();
  clearInterval(sampler);
  abusing = false;
  await filler;
  for (const s of sockets) s.terminate();
  const usage = await must(call('GET', '/api/crm/account/usage', abuser), 'usage');
  await call('POST', '/api/crm/cloud/deprovision', abuser);

  console.log(
    `abuse benchmark — ${duration} s per phase, ${connections} connections on /api/auth/me, chat runs one after another (LLM stand-in), embedded database, Node ${process.version}`,
  );
  if (cloudSkipped) console.log(`fork bomb and terminal flood skipped: ${cloudSkipped}`);
  else
    console.log(
      `abuser: fork bomb \`f(){ f|f& }; f\` and \`yes\` in two terminals of its sandbox; at most ${sandboxProcs} processes of its uid seen (cap 200)`,
    );
  console.log(
    `abuser: ${uploadsDone} uploads of 2 MiB stored, ${uploadsRefused} refused (first refusal: ${JSON.stringify(quotaAnswer)}); storage now ${JSON.stringify(
      { used_bytes: usage.storage.used_bytes, quota_bytes: usage.storage.quota_bytes },
    )}`,
  );
  const ratio = (a: number, b: number) => (b / a).toFixed(2);
  console.log(
    table(
      ['victim figure', 'no abuse', 'under abuse', 'ratio (abuse / none)'],
      [
        ['/api/auth/me p99 (ms)', base.meP99, abused.meP99, ratio(base.meP99, abused.meP99)],
        ['/api/auth/me req/s', base.meRps.toFixed(0), abused.meRps.toFixed(0), ratio(base.meRps, abused.meRps)],
        ['chat run p50 (ms)', base.chatP50.toFixed(1), abused.chatP50.toFixed(1), ratio(base.chatP50, abused.chatP50)],
        ['chat run p99 (ms)', base.chatP99.toFixed(1), abused.chatP99.toFixed(1), ratio(base.chatP99, abused.chatP99)],
        ['chat runs done', base.runs, abused.runs, ratio(base.runs, abused.runs)],
      ],
    ),
  );
  benchLine('abuse', {
    me_p99_ratio: +ratio(base.meP99, abused.meP99),
    me_rps_ratio: +ratio(base.meRps, abused.meRps),
    chat_p99_ratio: +ratio(base.chatP99, abused.chatP99),
    baseline: 'the same figures with no abuse, same run',
  });
} finally {
  abusing = false;
  for (const s of sockets) s.terminate();
  await stop(real.proc);
  await llm.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
process.exit(0);
