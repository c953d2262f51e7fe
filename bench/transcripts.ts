/**
 * Bench: meeting transcripts through the whole pipeline against local stand-ins of the speech server and the LLM
 * vendor (embedded database, server and stand-ins in one process):
 *  - a 10-minute generated WAV and a 2-minute video with 5 scene changes, upload → done;
 *  - the baseline, measured in the same run: the same ffmpeg commands, speech call and model calls made directly;
 *    the figure is the pipeline's time as a ratio of the baseline (its own overhead: upload, database, lease,
 *    progress events, embedding);
 *  - peak resident memory of the process while a 1 GB recording is uploaded (streamed to disk).
 * Run: npx tsx bench/transcripts.ts
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { loadConfig } from '../server/src/config.ts';
import { openDatabase } from '../server/src/db/database.ts';
import { migrateToLatest } from '../server/src/db/migrate.ts';
import { buildApp } from '../server/src/app.ts';
import { createDeps } from '../server/src/deps.ts';
import { MAX_FRAMES, SCENE_THRESHOLD } from '../server/src/modules/transcripts/transcripts.rules.ts';
import { modelFor } from '../server/src/modules/models/model-tiers.ts';
import { makeSceneVideo } from '../server/test/media-fixtures.ts';
import { startLlmStandIn } from '../server/test/standins/llm.ts';
import { startSpeechStandIn } from '../server/test/standins/speech.ts';
import { benchLine } from './lib/util.ts';

const silent: any = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, fatal() {}, child: () => silent };
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'crm-bench-transcripts-'));
const media = path.join(dataDir, 'media');
fs.mkdirSync(media);

const llm = await startLlmStandIn({
  responder: (r) =>
    JSON.stringify(r.body.messages).includes('"image"')
      ? { content: [{ type: 'text', text: 'A slide with a chart.' }] }
      : {
          content: [
            {
              type: 'text',
              text: JSON.stringify({ tldr: 'Bench.', key_points: ['a'], action_items: [], decisions: [], topics: [] }),
            },
          ],
        },
});
const speech = await startSpeechStandIn({ respond: (r) => ({ text: `heard ${r.bytes} bytes. `.repeat(200) }) });
const config = loadConfig({
  DATA_DIR: dataDir,
  DATABASE_URL: 'memory://',
  BREACH_CHECK_URL: 'off',
  HOST: '127.0.0.1',
  PORT: '0',
  SPEECH_URL: speech.url,
  LLM_PROVIDER: 'anthropic',
  LLM_BASE_URL: llm.anthropicUrl,
});
const database = await openDatabase({ url: config.databaseUrl, dataDir });
await migrateToLatest(database.db);
const deps = createDeps(
  config,
  database,
  { crmSecret: 'bench-signing-secret-0123456789abcdef', secretEncryptionKey: 'bench-encryption-key-0123456789abcd' },
  silent,
);
const app = await buildApp(deps, { logger: false });
await app.listen({ host: '127.0.0.1', port: 0 });
const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
const db = database.db;
const user = await db
  .insertInto('users')
  .values({ email: 'bench@example.com', password_hash: 'x', chat_id: '1', name: 'Bench' })
  .returning('id')
  .executeTakeFirstOrThrow();
await db
  .insertInto('account_settings')
  .values({ user_id: user.id, llm_key_enc: deps.sealer.seal('sk-bench-own-key') } as never)
  .execute();
await db.insertInto('projects').values({ owner_id: user.id, name: 'bench', display_name: 'bench' }).execute();
const token = await deps.tokens.sign({ sub: user.id, role: 'user', pv: 0, chat_id: String(user.id) });

const ff = (args: string[]) =>
  execFileSync('ffmpeg', ['-nostdin', '-hide_banner', '-loglevel', 'error', '-y', ...args], { maxBuffer: 1 << 26 });
const wav = path.join(media, 'meeting.wav');
ff(['-f', 'lavfi', '-i', 'sine=frequency=300:duration=600', '-ac', '2', '-ar', '44100', wav]);
const mp4 = makeSceneVideo(path.join(media, 'demo.mp4'), ['red', 'blue', 'green', 'white', 'black', 'yellow'], 20);

/** Multipart body streamed from a file (never buffered). */
function multipart(file: string, filename: string, type: string) {
  const b = `----bench${Date.now()}`;
  const head = Buffer.from(
    `--${b}\r\nContent-Disposition: form-data; name="filename"\r\n\r\n${filename}\r\n` +
      `--${b}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${b}--\r\n`);
  async function* body() {
    yield head;
    for await (const c of fs.createReadStream(file, { highWaterMark: 1 << 20 })) yield c as Buffer;
    yield tail;
  }
  return {
    headers: { 'content-type': `multipart/form-data; boundary=${b}`, authorization: `Bearer ${token}` },
    body: Readable.from(body()),
  };
}

/** POST the multipart body through node:http with backpressure (the client holds ~1 MB at a time). */
async function upload(file: string, filename: string, type: string) {
  const m = multipart(file, filename, type);
  return new Promise<{ status: number; body: any }>((resolve, reject) => {
    const req = http.request(
      `${url}/api/crm/projects/bench/transcripts/upload`,
      { method: 'POST', headers: m.headers },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    pipeline(m.body, req).catch(reject);
  });
}

async function throughPipeline(file: string, filename: string, type: string) {
  const t0 = performance.now();
  const r = await upload(file, filename, type);
  if (r.status !== 202) throw new Error(`upload ${r.status} ${JSON.stringify(r.body)}`);
  for (;;) {
    const d = await fetch(`${url}/api/crm/projects/bench/transcripts/${r.body.transcript_id}`, {
      headers: { authorization: `Bearer ${token}` },
    }).then((x) => x.json() as Promise<any>);
    if (d.status === 'done' || d.status === 'failed') {
      if (d.status !== 'done') throw new Error(`pipeline failed: ${d.error}`);
      return { ms: performance.now() - t0, frames: d.frames_json?.length ?? 0 };
    }
    await new Promise((res) => setTimeout(res, 50));
  }
}

/** The same work made directly: ffmpeg to 16 kHz mono, the speech call, frames, vision calls, the summary call. */
async function direct(file: string, video: boolean) {
  const t0 = performance.now();
  const out = path.join(media, 'direct.wav');
  await deps.media.toSpeechWav(file, out);
  await deps.speech.transcribe({ file: out, filename: 'audio.wav' });
  if (video) {
    const dir = path.join(media, 'frames');
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir);
    await deps.media.ffmpeg(file, [
      '-loglevel',
      'info',
      '-y',
      '-an',
      '-vf',
      `select='eq(n\\,0)+gt(scene\\,${SCENE_THRESHOLD})',showinfo,scale='min(768\\,iw)':-2`,
      '-vsync',
      'vfr',
      '-q:v',
      '5',
      path.join(dir, '%04d.jpg'),
    ]);
    for (const f of fs.readdirSync(dir).slice(0, MAX_FRAMES)) {
      await deps.llm.complete({
        model: modelFor('transcript', 'anthropic'),
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', media_type: 'image/jpeg', data: fs.readFileSync(path.join(dir, f)).toString('base64') },
              { type: 'text', text: 'Describe it.' },
            ],
          },
        ],
        maxTokens: 300,
        apiKey: 'sk-bench-own-key',
      });
    }
  }
  await deps.llm.complete({
    model: modelFor('transcript', 'anthropic'),
    messages: [{ role: 'user', content: 'Transcript: …' }],
    maxTokens: 1500,
    apiKey: 'sk-bench-own-key',
  });
  return performance.now() - t0;
}

const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
console.log('meeting transcripts (embedded database; speech and LLM stand-ins on 127.0.0.1; one process):');
const ratios: Record<string, number> = {};
for (const [label, file, name, type, video] of [
  ['10-minute WAV (44.1 kHz stereo, 101 MB)', wav, 'meeting.wav', 'audio/wav', false],
  ['2-minute MP4, 5 scene changes', mp4, 'demo.mp4', 'video/mp4', true],
] as const) {
  const base = await direct(file, video);
  const p = await throughPipeline(file, name, type);
  const base2 = await direct(file, video);
  const b = (base + base2) / 2;
  ratios[video ? 'video_ratio' : 'audio_ratio'] = +(p.ms / b).toFixed(2);
  console.log(
    `  ${label}: pipeline ${p.ms.toFixed(0)} ms${video ? ` (${p.frames} frames)` : ''}, direct ${b.toFixed(0)} ms → ratio ${(p.ms / b).toFixed(2)}×`,
  );
}

// Peak memory while a 1 GB recording is uploaded (zeros; the pipeline then fails it at ffmpeg, which is not measured).
const big = path.join(media, 'big.wav');
const fd = fs.openSync(big, 'w');
const chunk = Buffer.alloc(8 << 20);
for (let i = 0; i < 127; i++) fs.writeSync(fd, chunk);
fs.closeSync(fd);
global.gc?.();
await new Promise((r) => setTimeout(r, 500));
const idle = process.memoryUsage().rss;
let peak = idle;
const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
const t0 = performance.now();
const up = await upload(big, 'big.wav', 'audio/wav');
const ms = performance.now() - t0;
clearInterval(timer);
console.log(
  `  upload of ${mb(fs.statSync(big).size)} MB: status ${up.status}, ${ms.toFixed(0)} ms; peak RSS ${mb(peak)} MB, idle ${mb(idle)} MB → +${mb(peak - idle)} MB`,
);

benchLine('transcripts', {
  ...ratios,
  upload_peak_rss_growth_mib: +mb(peak - idle),
  baseline: 'the same ffmpeg commands, speech and model calls made directly (time: lower is better)',
});
await app.close();
await database.close();
await llm.close();
await speech.close();
fs.rmSync(dataDir, { recursive: true, force: true });
