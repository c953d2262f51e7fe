/**
 * Crash safety of the transcript pipeline with the real process: `kill -9` of the service while a transcript is
 * being transcribed, then a new start on the same data directory. The job resumes after its last finished step
 * (the audio is not extracted again: the uploaded file is even removed before the restart) and finishes with no
 * file left; a transcript interrupted twice in the same step fails with the reason and leaves no file.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { multipartBody } from '../../../test/helpers.ts';
import { makeWav } from '../../../test/media-fixtures.ts';
import { startLlmStandIn } from '../../../test/standins/llm.ts';
import { startSpeechStandIn } from '../../../test/standins/speech.ts';
import { freePort } from '../../../test/net.ts';

const ROOT = path.resolve(import.meta.dirname, '../../../..');
const ADMIN = { email: 'admin@example.com', password: 'admin-password-123' };
const procs: ChildProcess[] = [];
let dataDir: string;
let llm: Awaited<ReturnType<typeof startLlmStandIn>>;
let speech: Awaited<ReturnType<typeof startSpeechStandIn>>;
let slow = true;

async function start() {
  const port = await freePort();
  const proc = spawn(process.execPath, ['server/start.js'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      BREACH_CHECK_URL: 'off',
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      SPEECH_URL: speech.url,
      LLM_PROVIDER: 'anthropic',
      LLM_BASE_URL: llm.anthropicUrl,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  procs.push(proc);
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<void>((r) => proc.on('exit', () => r()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`the service exited: ${out}`);
    try {
      const res = await fetch(`${url}/readyz`);
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`the service did not become ready: ${out}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    async kill9() {
      proc.kill('SIGKILL');
      await exited;
    },
    async stop() {
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

async function call(url: string, method: string, p: string, token?: string, body?: unknown) {
  const res = await fetch(`${url}${p}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json().catch(() => null)) as any };
}

async function waitFor(url: string, token: string, project: string, id: number, ok: (b: any) => boolean) {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const r = await call(url, 'GET', `/api/crm/projects/${project}/transcripts/${id}`, token);
    if (r.status === 200 && ok(r.body)) return r.body;
    if (Date.now() > deadline) throw new Error(`transcript ${id}: ${JSON.stringify(r.body)}`);
    await new Promise((res) => setTimeout(res, 150));
  }
}

/** Wait until the speech stand-in has received more than `n` requests. */
async function heard(n: number) {
  const deadline = Date.now() + 90_000;
  while (speech.requests.length <= n) {
    if (Date.now() > deadline) throw new Error('the speech server was not called');
    await new Promise((r) => setTimeout(r, 100));
  }
}

const files = (sub: string) => {
  const d = path.join(dataDir, 'transcripts', sub);
  return fs.existsSync(d) ? fs.readdirSync(d) : [];
};

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(path.resolve('.tmp'), 'crash-'));
  llm = await startLlmStandIn({
    responder: () => ({
      content: [
        {
          type: 'text',
          text: JSON.stringify({ tldr: 'Resumed.', key_points: [], action_items: [], decisions: [], topics: [] }),
        },
      ],
    }),
  });
  // While `slow`, the speech server never answers in time: the pipeline sits in "transcribing".
  speech = await startSpeechStandIn({
    respond: () => (slow ? { text: 'late', delayMs: 600_000 } : { text: 'the words' }),
  });
});
afterAll(async () => {
  for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  await llm?.close();
  await speech?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('transcript pipeline under kill -9', () => {
  it('resumes after the last finished step, then fails a transcript interrupted twice in one step; no file is left', async () => {
    let s = await start();
    const login = await call(s.url, 'POST', '/api/auth/login', undefined, ADMIN);
    const token = login.body.token as string;
    expect((await call(s.url, 'PUT', '/api/crm/account/settings', token, { llm_key: 'sk-own-key-crash' })).status).toBe(
      200,
    );
    const created = await call(s.url, 'POST', '/api/crm/projects/create', token, {
      displayName: 'Crash',
      projectName: 'crash-test',
    });
    expect(created.status, JSON.stringify(created.body)).toBeLessThan(300);
    const wav = fs.readFileSync(makeWav(path.join(dataDir, 'fixture.wav'), 2));
    const upload = async (url: string) => {
      const m = multipartBody([
        { name: 'filename', value: 'meeting.wav' },
        { name: 'file', value: wav, filename: 'meeting.wav', contentType: 'audio/wav' },
      ]);
      const res = await fetch(`${url}/api/crm/projects/crash-test/transcripts/upload`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, ...m.headers },
        body: new Uint8Array(m.payload),
      });
      expect(res.status).toBe(202);
      return (await res.json()) as { transcript_id: number; job_id: string };
    };

    // 1. Killed while transcribing; the audio step had finished.
    const before = speech.requests.length;
    const first = await upload(s.url);
    await heard(before); // the speech call is under way
    const heardBefore = speech.requests.length;
    await s.kill9();
    // The upload is not needed any more: extraction finished and must not run again.
    for (const f of files('incoming')) fs.rmSync(path.join(dataDir, 'transcripts', 'incoming', f));
    slow = false;
    s = await start();
    const done = await waitFor(
      s.url,
      token,
      'crash-test',
      first.transcript_id,
      (b) => b.status === 'done' || b.status === 'failed',
    );
    expect(done).toMatchObject({ status: 'done', error: null, transcript_text: 'the words', progress_pct: 100 });
    expect(done.summary_json.tldr).toBe('Resumed.');
    expect(speech.requests.length).toBe(heardBefore + 1); // transcribed again once: that step had not finished
    expect(files('incoming')).toEqual([]);
    expect(files('work')).toEqual([]);

    // 2. Killed twice in the same step: failed with the reason, files removed.
    slow = true;
    let n = speech.requests.length;
    const second = await upload(s.url);
    await heard(n);
    await s.kill9();
    n = speech.requests.length;
    s = await start();
    await heard(n); // resumed: transcribing again
    await s.kill9();
    s = await start();
    const failed = await waitFor(s.url, token, 'crash-test', second.transcript_id, (b) => b.status === 'failed');
    expect(failed.error).toBe('The pipeline was interrupted during transcribing again.');
    expect(failed.transcript_text).toBeNull();
    expect(files('incoming')).toEqual([]);
    expect(files('work')).toEqual([]);
    await s.stop();
  }, 600_000);
});
