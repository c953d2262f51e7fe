/**
 * Meeting transcripts through the HTTP API on a real database, the system's ffmpeg, and local stand-ins of the
 * speech server and the LLM vendor: every state of a WAV and of an MP4 with two scene changes, the progress
 * stream, upload refusals (nothing left behind), the summary failure and its retry, vision failures.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, buildTestApp, createProject, createUser, multipartBody, type TestApp } from '../../../test/helpers.ts';
import { makeSceneVideo, makeWav } from '../../../test/media-fixtures.ts';
import { startLlmStandIn, type RecordedRequest } from '../../../test/standins/llm.ts';
import { startSpeechStandIn } from '../../../test/standins/speech.ts';
import { VISION_FAILED_MARKER } from './transcripts.rules.ts';

const SUMMARY = {
  tldr: 'The team agreed to ship on Friday.',
  key_points: ['Release is ready', 'Docs need a pass'],
  action_items: [
    { task: 'Write the release notes', owner: 'Olena' },
    { task: 'Check the docs', owner: null },
  ],
  decisions: ['Ship on Friday'],
  topics: ['release', 'docs'],
};
const isVision = (r: RecordedRequest) => JSON.stringify(r.body.messages).includes('"image"');

describe('meeting transcripts', () => {
  let t: TestApp;
  let llm: Awaited<ReturnType<typeof startLlmStandIn>>;
  let speech: Awaited<ReturnType<typeof startSpeechStandIn>>;
  let owner: Awaited<ReturnType<typeof createUser>>;
  let project: { id: number; name: string };
  let wav: Buffer;
  let mp4: Buffer;
  const statuses = new Map<string, string[]>();
  /** Frame times (`mm:ss`) whose vision call fails. */
  let visionFails = new Set<string>();
  let summaryStatus: number | undefined;

  const upload = (token: string | undefined, parts: Parameters<typeof multipartBody>[0], name = project.name) => {
    const m = multipartBody(parts);
    return api(t.app, 'POST', `/api/crm/projects/${name}/transcripts/upload`, {
      token,
      payload: m.payload,
      headers: m.headers,
    });
  };
  const wavParts = (extra: Parameters<typeof multipartBody>[0] = []) => [
    { name: 'filename', value: 'standup.wav' },
    { name: 'file', value: wav, filename: 'standup.wav', contentType: 'audio/wav' },
    ...extra,
  ];
  const detail = (id: number) =>
    api(t.app, 'GET', `/api/crm/projects/${project.name}/transcripts/${id}`, { token: owner.token });
  async function until(id: number, done: (b: any) => boolean, ms = 60_000) {
    const end = Date.now() + ms;
    for (;;) {
      const r = await detail(id);
      if (done(r.body)) return r.body;
      if (Date.now() > end) throw new Error(`transcript ${id} stuck in ${r.body.status}: ${r.body.error}`);
      await new Promise((res) => setTimeout(res, 100));
    }
  }
  const incoming = () => fs.readdirSync(path.join(t.dataDir, 'transcripts', 'incoming'));
  const work = () =>
    fs.existsSync(path.join(t.dataDir, 'transcripts', 'work'))
      ? fs.readdirSync(path.join(t.dataDir, 'transcripts', 'work'))
      : [];

  beforeAll(async () => {
    llm = await startLlmStandIn({
      responder: (r) => {
        if (isVision(r)) {
          const at = /Frame at ([0-9:]+)/.exec(JSON.stringify(r.body.messages))?.[1] ?? '';
          if (visionFails.has(at)) return { status: 400, errorType: 'invalid_request_error' };
          return {
            content: [{ type: 'text', text: `A solid colour slide at ${at}.` }],
            usage: { input_tokens: 50, output_tokens: 9 },
          };
        }
        if (summaryStatus) return { status: summaryStatus };
        return {
          content: [{ type: 'text', text: JSON.stringify(SUMMARY) }],
          usage: { input_tokens: 400, output_tokens: 80 },
        };
      },
    });
    speech = await startSpeechStandIn({
      respond: () => ({ text: 'We will ship on Friday. Olena writes the release notes.' }),
    });
    t = await buildTestApp({
      env: {
        LLM_PROVIDER: 'anthropic',
        LLM_BASE_URL: llm.anthropicUrl,
        SPEECH_URL: speech.url,
        TRANSCRIPTS_UPLOAD_LIMIT_BYTES: String(2 * 1024 * 1024),
      },
    });
    owner = await createUser(t);
    await t.services.settings.update({ id: owner.id, email: owner.email, role: 'user' } as never, {
      llm_key: 'sk-own-key-12345',
    });
    project = await createProject(t, owner.id);
    t.deps.bus.subscribe('transcript.progress', (p) => {
      const list = statuses.get(p.job_id) ?? [];
      if (list.at(-1) !== p.status) list.push(p.status);
      statuses.set(p.job_id, list);
    });
    const dir = path.join(t.dataDir, 'fixtures');
    wav = fs.readFileSync(makeWav(path.join(dir, 'a.wav'), 3));
    mp4 = fs.readFileSync(makeSceneVideo(path.join(dir, 'b.mp4'), ['red', 'blue', 'green'], 2));
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await llm?.close();
    await speech?.close();
  });

  it('a WAV goes queued → extracting_audio → transcribing → transcribed → summarizing → summarized → embedding → done', async () => {
    const calls = llm.modelCalls().length;
    const r = await upload(owner.token, wavParts());
    expect(r.status, r.text).toBe(202);
    expect(r.body).toEqual({ transcript_id: expect.any(Number), job_id: expect.any(String), status: 'queued' });
    const body = await until(r.body.transcript_id, (b) => b.status === 'done');
    expect(statuses.get(r.body.job_id)).toEqual([
      'extracting_audio',
      'transcribing',
      'transcribed',
      'summarizing',
      'summarized',
      'embedding',
      'done',
    ]);
    expect(body).toMatchObject({
      filename: 'standup.wav',
      kind: 'audio',
      progress_pct: 100,
      error: null,
      transcript_text: 'We will ship on Friday. Olena writes the release notes.',
      frames_json: null,
      summary_json: { ...SUMMARY, model: expect.any(String), generated_at: expect.any(String) },
    });
    // The speech server got 16 kHz mono WAV converted by ffmpeg (a 3 s tone: 96 000 bytes of samples).
    const heard = speech.requests.at(-1)!;
    expect(heard.head.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(Math.abs(heard.bytes - 96_044)).toBeLessThan(2000);
    // One summary call with the caller's own key, metered as `transcript`.
    const summaryCall = llm
      .modelCalls()
      .slice(calls)
      .find((c) => !isVision(c))!;
    expect(summaryCall.headers['x-api-key'] ?? summaryCall.headers.authorization).toMatch(
      /^(Bearer )?sk-own-key-12345$/,
    );
    const usage = await t.db.selectFrom('token_usage').selectAll().where('source', '=', 'transcript').execute();
    expect(usage.some((u) => u.user_id === owner.id && u.key_source === 'own')).toBe(true);
    // Embedded as a `transcript` document of the project; the files are gone.
    const doc = await t.db
      .selectFrom('knowledge_documents')
      .selectAll()
      .where('doc_type', '=', 'transcript')
      .where('doc_id', '=', String(r.body.transcript_id))
      .executeTakeFirst();
    expect(doc?.project_id).toBe(project.id);
    expect(doc?.chunk_count).toBeGreaterThan(0);
    const hits = await api(
      t.app,
      'GET',
      `/api/crm/projects/${project.name}/rag/search?q=release%20notes%20Friday&doc_types=transcript`,
      {
        token: owner.token,
      },
    );
    expect(hits.status).toBe(200);
    expect(hits.body.hits[0]).toMatchObject({ doc_type: 'transcript', doc_id: String(r.body.transcript_id) });
    expect(incoming()).toEqual([]);
    expect(work()).toEqual([]);
  }, 60_000);

  it('an MP4 with two scene changes goes through frames and vision; a failed frame is marked and the pass goes on', async () => {
    visionFails = new Set(['00:02']);
    const r = await upload(owner.token, [
      { name: 'file', value: mp4, filename: 'demo.mp4', contentType: 'video/mp4' },
      { name: 'filename', value: 'demo.mp4' },
      { name: 'embed_to_rag', value: 'false' },
    ]);
    expect(r.status, r.text).toBe(202);
    const body = await until(r.body.transcript_id, (b) => b.status === 'done');
    visionFails = new Set();
    // embed_to_rag false: no embedding step.
    expect(statuses.get(r.body.job_id)).toEqual([
      'extracting_audio',
      'transcribing',
      'extracting_frames',
      'frames_extracted',
      'vision_analyzing',
      'vision_analyzed',
      'summarizing',
      'summarized',
      'done',
    ]);
    expect(body.kind).toBe('video');
    expect(body.frames_json.map((f: any) => f.ts_ms)).toEqual([0, 2000, 4000]);
    expect(body.frames_json[0].description).toBe('A solid colour slide at 00:00.');
    expect(body.frames_json[1].description.startsWith(VISION_FAILED_MARKER)).toBe(true);
    expect(body.frames_json[2].description).toBe('A solid colour slide at 00:04.');
    // The frames were the summary's context.
    const summaryCall = llm
      .modelCalls()
      .filter((c) => !isVision(c))
      .at(-1)!;
    expect(JSON.stringify(summaryCall.body.messages)).toContain('[00:02]');
    expect(
      await t.db
        .selectFrom('knowledge_documents')
        .select('id')
        .where('doc_id', '=', String(r.body.transcript_id))
        .where('doc_type', '=', 'transcript')
        .execute(),
    ).toEqual([]);
    expect(incoming()).toEqual([]);
    expect(work()).toEqual([]);
  }, 60_000);

  it('the progress stream replays the state and ends at once for a finished job; it follows a running job to its end', async () => {
    const done = await api(t.app, 'GET', `/api/crm/projects/${project.name}/transcripts?limit=1`, {
      token: owner.token,
    });
    const jobId = done.body.items[0].job_id;
    const s1 = await api(
      t.app,
      'GET',
      `/api/crm/projects/${project.name}/transcripts/job/${jobId}/progress?token=${owner.token}`,
    );
    expect(s1.status).toBe(200);
    expect(s1.headers['content-type']).toContain('text/event-stream');
    // A stream writes its own head (reply.hijack): the request id and the API's security headers still come with it.
    expect(s1.headers['x-request-id']).toBeTruthy();
    expect(s1.headers['content-security-policy']).toBe(
      "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    expect(s1.headers['x-content-type-options']).toBe('nosniff');
    expect(s1.headers['x-frame-options']).toBe('DENY');
    expect(s1.text).toContain('event: progress\ndata: {"status":"done","progress_pct":100');
    expect(s1.text.trim().split('\n\n').at(-1)).toMatch(/^event: end\ndata: \{"status":"done"/);

    speech.respond(() => ({ text: 'slow words', delayMs: 2500 }));
    const r = await upload(owner.token, wavParts());
    const live = await api(
      t.app,
      'GET',
      `/api/crm/projects/${project.name}/transcripts/job/${r.body.job_id}/progress?token=${owner.token}`,
    );
    speech.respond(() => ({ text: 'We will ship on Friday. Olena writes the release notes.' }));
    const events = live.text
      .split('\n\n')
      .filter((b) => b.startsWith('event:'))
      .map((b) => ({ event: b.split('\n')[0].slice(7), data: JSON.parse(b.split('\n')[1].slice(6)) }));
    expect(events.map((e) => e.data.status)).toContain('transcribing');
    expect(events.at(-1)).toEqual({
      event: 'end',
      data: expect.objectContaining({ status: 'done', progress_pct: 100, error: null }),
    });
    expect(live.text).toContain(': ping'); // heartbeats every second while transcribing took 2.5 s
    const unknown = await api(t.app, 'GET', `/api/crm/projects/${project.name}/transcripts/job/nope/progress`, {
      token: owner.token,
    });
    expect(unknown.status).toBe(404);
  }, 60_000);

  it('lists newest first with limit and cursor; detail is owner or admin only', async () => {
    const p1 = await api(t.app, 'GET', `/api/crm/projects/${project.name}/transcripts?limit=2`, { token: owner.token });
    expect(p1.status).toBe(200);
    expect(p1.body.items).toHaveLength(2);
    expect(p1.body.items[0].transcript_id).toBeGreaterThan(p1.body.items[1].transcript_id);
    expect(p1.body.items[0].tldr).toBe(SUMMARY.tldr);
    expect(p1.body.next_cursor).toBe(p1.body.items[1].transcript_id);
    const p2 = await api(
      t.app,
      'GET',
      `/api/crm/projects/${project.name}/transcripts?limit=2&cursor=${p1.body.next_cursor}`,
      { token: owner.token },
    );
    expect(p2.body.items).toHaveLength(1);
    expect(p2.body.next_cursor).toBeNull();
    const all = await api(t.app, 'GET', `/api/crm/projects/${project.name}/transcripts`, { token: owner.token });
    expect(all.body.items).toHaveLength(3);

    const other = await createUser(t);
    const admin = await createUser(t, { role: 'admin' });
    const id = all.body.items[0].transcript_id;
    expect(
      (await api(t.app, 'GET', `/api/crm/projects/${project.name}/transcripts/${id}`, { token: other.token })).status,
    ).toBe(403);
    expect(
      (await api(t.app, 'GET', `/api/crm/projects/${project.name}/transcripts/${id}`, { token: admin.token })).status,
    ).toBe(200);
    expect((await api(t.app, 'GET', `/api/crm/projects/${project.name}/transcripts/${id}`)).status).toBe(401);
    expect(
      (await api(t.app, 'GET', `/api/crm/projects/${project.name}/transcripts/999999`, { token: owner.token })).body
        .error,
    ).toBe('transcript_not_found');
    expect((await upload(other.token, wavParts())).status).toBe(403);
  });

  it('refuses a missing field, a bad MIME or extension, an oversized file and a failed disk write, leaving nothing behind', async () => {
    const before = (
      await api(t.app, 'GET', `/api/crm/projects/${project.name}/transcripts?limit=100`, { token: owner.token })
    ).body.items.length;
    expect((await upload(undefined, wavParts())).status).toBe(401);
    const noFile = await upload(owner.token, [{ name: 'filename', value: 'a.wav' }]);
    expect([noFile.status, noFile.body.error]).toEqual([400, 'file_required']);
    const noName = await upload(owner.token, [
      { name: 'file', value: wav, filename: 'a.wav', contentType: 'audio/wav' },
    ]);
    expect([noName.status, noName.body.error]).toEqual([400, 'filename_required']);
    const text = await upload(owner.token, [
      { name: 'filename', value: 'a.wav' },
      { name: 'file', value: 'hello', filename: 'a.wav', contentType: 'text/plain' },
    ]);
    expect([text.status, text.body.error]).toEqual([400, 'invalid_mime']);
    const mismatch = await upload(owner.token, [
      { name: 'filename', value: 'a.mp4' },
      { name: 'file', value: wav, filename: 'a.wav', contentType: 'audio/wav' },
    ]);
    expect([mismatch.status, mismatch.body.error]).toEqual([400, 'invalid_mime']);
    const ext = await upload(owner.token, [
      { name: 'filename', value: 'a.exe' },
      { name: 'file', value: wav, filename: 'a.wav', contentType: 'audio/wav' },
    ]);
    expect([ext.status, ext.body.error]).toEqual([400, 'invalid_extension']);
    const big = await upload(owner.token, [
      { name: 'filename', value: 'big.wav' },
      { name: 'file', value: Buffer.alloc(3 * 1024 * 1024, 7), filename: 'big.wav', contentType: 'audio/wav' },
    ]);
    expect([big.status, big.body.error]).toEqual([413, 'payload_too_large']);
    expect(incoming()).toEqual([]);

    // The upload folder cannot be written (a file is in its way): 500, no row, no file.
    const dir = path.join(t.dataDir, 'transcripts', 'incoming');
    fs.rmSync(dir, { recursive: true });
    fs.writeFileSync(dir, 'in the way');
    try {
      const broken = await upload(owner.token, wavParts());
      expect([broken.status, broken.body.error]).toEqual([500, 'disk_write_failed']);
      expect(broken.text).not.toContain(t.dataDir);
    } finally {
      fs.rmSync(dir);
      fs.mkdirSync(dir);
    }
    const after = (
      await api(t.app, 'GET', `/api/crm/projects/${project.name}/transcripts?limit=100`, { token: owner.token })
    ).body.items.length;
    expect(after).toBe(before);
    expect(incoming()).toEqual([]);
  });

  it('a failed summary keeps the text and rests in transcribed; the retry route summarizes and finishes it', async () => {
    summaryStatus = 500;
    const r = await upload(owner.token, wavParts());
    const rested = await until(r.body.transcript_id, (b) => b.status === 'transcribed' && b.error);
    summaryStatus = undefined;
    expect(rested).toMatchObject({ status: 'transcribed', summary_json: null, transcript_text: expect.any(String) });
    expect(rested.error).toContain('summary failed');
    // Nothing more happens until the retry.
    await new Promise((res) => setTimeout(res, 500));
    expect((await detail(r.body.transcript_id)).body.status).toBe('transcribed');
    const again = await api(
      t.app,
      'POST',
      `/api/crm/projects/${project.name}/transcripts/${r.body.transcript_id}/retry-summary`,
      {
        token: owner.token,
      },
    );
    expect(again.status).toBe(202);
    const done = await until(r.body.transcript_id, (b) => b.status === 'done');
    expect(done.summary_json.tldr).toBe(SUMMARY.tldr);
    expect(done.error).toBeNull();
    const twice = await api(
      t.app,
      'POST',
      `/api/crm/projects/${project.name}/transcripts/${r.body.transcript_id}/retry-summary`,
      {
        token: owner.token,
      },
    );
    expect([twice.status, twice.body.error]).toEqual([409, 'not_retryable']);
  }, 60_000);

  it('an undecodable file fails cleanly with the reason and leaves no file', async () => {
    const r = await upload(owner.token, [
      { name: 'filename', value: 'broken.mp3' },
      {
        name: 'file',
        value: Buffer.from('this is not audio at all'.repeat(100)),
        filename: 'broken.mp3',
        contentType: 'audio/mpeg',
      },
    ]);
    expect(r.status).toBe(202);
    const failed = await until(r.body.transcript_id, (b) => b.status === 'failed');
    expect(failed.error).toBe('The file is not an accepted audio or video format.');
    expect(failed.transcript_text).toBeNull();
    expect(incoming()).toEqual([]);
    expect(work()).toEqual([]);
  }, 30_000);

  it('a playlist named like a recording that lists real audio files on disk fails, and the speech server receives nothing', async () => {
    // Another tenant's recordings, at absolute paths: a WAV, and an MP3 (which ffmpeg's HLS demuxer, left to guess
    // the format, reads and hands on).
    const wavFile = makeWav(path.join(t.dataDir, 'other-tenant', 'secret.wav'), 1);
    const mp3File = makeWav(path.join(t.dataDir, 'other-tenant', 'secret.mp3'), 1);
    for (const real of [wavFile, mp3File]) {
      const before = speech.requests.length;
      const r = await upload(owner.token, [
        { name: 'filename', value: 'standup.mp3' },
        {
          name: 'file',
          value: Buffer.from(`#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:1.0,\n${real}\n#EXT-X-ENDLIST\n`),
          filename: 'standup.mp3',
          contentType: 'audio/mpeg',
        },
      ]);
      expect(r.status).toBe(202);
      const failed = await until(r.body.transcript_id, (b) => b.status === 'failed');
      expect(failed.error, real).toBe('The file is not an accepted audio or video format.');
      expect(failed.transcript_text).toBeNull();
      expect(speech.requests.length, real).toBe(before);
    }
  }, 60_000);

  it('without ffmpeg or a speech server the upload answers 503 with a code', async () => {
    const t2 = await buildTestApp({ env: { SPEECH_URL: speech.url, FFMPEG_PATH: '/nonexistent/ffmpeg' } });
    try {
      const u = await createUser(t2);
      const p = await createProject(t2, u.id);
      const m = multipartBody(wavParts());
      const r = await api(t2.app, 'POST', `/api/crm/projects/${p.name}/transcripts/upload`, {
        token: u.token,
        payload: m.payload,
        headers: m.headers,
      });
      expect([r.status, r.body.error]).toEqual([503, 'ffmpeg_unavailable']);
    } finally {
      await t2.close();
    }
    const t3 = await buildTestApp();
    try {
      const u = await createUser(t3);
      const p = await createProject(t3, u.id);
      const m = multipartBody(wavParts());
      const r = await api(t3.app, 'POST', `/api/crm/projects/${p.name}/transcripts/upload`, {
        token: u.token,
        payload: m.payload,
        headers: m.headers,
      });
      expect([r.status, r.body.error]).toEqual([503, 'speech_unavailable']);
    } finally {
      await t3.close();
    }
  }, 60_000);
});
