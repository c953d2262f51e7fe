import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { Document, Packer, Paragraph } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZipFile } from 'yazl';
import {
  api,
  buildTestApp,
  createProject,
  createUser,
  IMAGES,
  multipartBody,
  type TestApp,
} from '../../../test/helpers.ts';
import { giveKey } from '../../../test/runtime-fixtures.ts';
import { startLlmStandIn } from '../../../test/standins/llm.ts';
import { CHUNK_SIZE, DOCX_INFLATED_LIMIT, MAX_UPLOAD_SESSIONS } from './notes.rules.ts';

/** A local web site: an article page, a plain-text page, redirects, and a slow page. */
async function startSite() {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/article')
      return res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
        `<html><head><title>Otter facts</title></head><body><nav>Home | About | Login</nav>
         <article><h1>Otters</h1>${'<p>Sea otters hold hands while sleeping so they do not drift apart. </p>'.repeat(12)}
         <p>The quokka clause is the marker of this page.</p></article><footer>© site</footer></body></html>`,
      );
    // A YouTube stand-in: a watch page listing caption tracks (German and English), timed text, a transcript API.
    if (url.pathname === '/watch') {
      const tracks =
        url.searchParams.get('v') === 'aaaaaaaaaaa'
          ? [
              { baseUrl: '/timedtext?lang=de', languageCode: 'de' },
              { baseUrl: '/timedtext?lang=en', languageCode: 'en', kind: 'asr' },
            ]
          : [];
      return res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          `<script>var ytInitialPlayerResponse = {"captions":{"captionTracks":${JSON.stringify(tracks)}}};</script>`,
        );
    }
    if (url.pathname === '/timedtext')
      return res
        .writeHead(200, { 'content-type': 'text/xml' })
        .end(
          `<transcript><text start="0" dur="1">${url.searchParams.get('lang') === 'en' ? 'Hello &amp;amp; welcome' : 'Hallo'}</text><text start="1">to the otters</text></transcript>`,
        );
    if (url.pathname === '/transcript') {
      if (url.searchParams.get('video_id') !== 'bbbbbbbbbbb') return res.writeHead(404).end('{}');
      return res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ segments: [{ text: 'words from' }, { text: 'the transcript service' }] }));
    }
    if (url.pathname === '/plain')
      return res.writeHead(200, { 'content-type': 'text/plain' }).end('plain saffron text');
    if (url.pathname === '/redirect')
      return res.writeHead(302, { location: url.searchParams.get('to') ?? '/article' }).end();
    if (url.pathname === '/huge') {
      res.writeHead(200, { 'content-type': 'text/html' });
      const chunk = Buffer.alloc(1024 * 1024, 'a');
      let n = 0;
      const write = () => {
        while (n < 12 && res.write(chunk)) n++;
        if (n >= 12) res.end();
        else res.once('drain', write);
      };
      return write();
    }
    res.writeHead(404).end('no');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function makePdf(text: string): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const page = pdf.addPage();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  page.drawText(text, { x: 50, y: 700, font, size: 12 });
  return Buffer.from(await pdf.save());
}

async function makeDocx(text: string): Promise<Buffer> {
  const doc = new Document({ sections: [{ children: [new Paragraph(text)] }] });
  return Packer.toBuffer(doc);
}

/** A DOCX-shaped zip bomb: `word/document.xml` holds `bytes` zeros (a few hundred KB once compressed). */
async function makeDocxBomb(bytes: number): Promise<Buffer> {
  const zip = new ZipFile();
  zip.addBuffer(Buffer.from('<?xml version="1.0"?><Types/>'), '[Content_Types].xml');
  const chunk = Buffer.alloc(1024 * 1024);
  let left = bytes;
  zip.addReadStream(
    new Readable({
      read() {
        const n = Math.min(left, chunk.length);
        left -= n;
        this.push(n ? chunk.subarray(0, n) : null);
      },
    }),
    'word/document.xml',
  );
  zip.end();
  const parts: Buffer[] = [];
  for await (const part of zip.outputStream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

describe('research notes', () => {
  let t: TestApp;
  let llm: Awaited<ReturnType<typeof startLlmStandIn>>;
  let site: Awaited<ReturnType<typeof startSite>>;
  let owner: Awaited<ReturnType<typeof createUser>>;
  let project: Awaited<ReturnType<typeof createProject>>;
  const base = () => `/api/crm/projects/${project.name}/notes`;

  beforeAll(async () => {
    llm = await startLlmStandIn();
    site = await startSite();
    // Only the host name `localhost` is allowed (the local site); 127.0.0.1 itself stays refused.
    t = await buildTestApp({
      env: {
        LLM_PROVIDER: 'anthropic',
        LLM_BASE_URL: llm.anthropicUrl,
        OUTBOUND_ALLOW_PRIVATE: 'localhost',
        YOUTUBE_BASE_URL: `http://localhost:${site.port}`,
        YOUTUBE_TRANSCRIPT_API_URL: `http://localhost:${site.port}/transcript`,
        YTDLP_PATH: '/nonexistent/yt-dlp',
      },
    });
    owner = await createUser(t);
    project = await createProject(t, owner.id);
    await giveKey(t, owner.id);
  });
  afterAll(async () => {
    await t?.close();
    await llm?.close();
    await site?.close();
  });

  const newNote = async (title = 'Research') => {
    const r = await api(t.app, 'POST', base(), { token: owner.token, body: { title } });
    expect(r.status).toBe(201);
    return r.body.id as number;
  };
  const upload = (noteId: number, filename: string, value: Buffer | string, extra: Record<string, string> = {}) => {
    const mp = multipartBody([
      ...Object.entries(extra).map(([name, v]) => ({ name, value: v })),
      { name: 'file', value, filename },
    ]);
    return api(t.app, 'POST', `${base()}/${noteId}/sources`, { token: owner.token, ...mp });
  };
  /** Poll the note until the source is done or error. */
  const settled = async (noteId: number, sourceId: number, ms = 20_000) => {
    const end = Date.now() + ms;
    for (;;) {
      const r = await api(t.app, 'GET', `${base()}/${noteId}`, { token: owner.token });
      const s = r.body.sources.find((x: { id: number }) => x.id === sourceId);
      if (s && (s.status === 'done' || s.status === 'error')) return s;
      if (Date.now() > end) throw new Error(`source ${sourceId} still ${s?.status}`);
      await new Promise((res) => setTimeout(res, 50));
    }
  };

  it('creates, lists, reads and deletes notes; other users get 403, unknown notes 404', async () => {
    const r = await api(t.app, 'POST', base(), { token: owner.token, body: { title: 'Market', description: 'why' } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ id: expect.any(Number), title: 'Market' });
    const list = await api(t.app, 'GET', base(), { token: owner.token });
    expect(list.status).toBe(200);
    expect(list.body.find((n: { id: number }) => n.id === r.body.id)).toMatchObject({
      title: 'Market',
      description: 'why',
      source_count: 0,
    });
    const detail = await api(t.app, 'GET', `${base()}/${r.body.id}`, { token: owner.token });
    expect(detail.body).toMatchObject({ id: r.body.id, sources: [], issue_links: [], chats: [] });

    const other = await createUser(t);
    expect((await api(t.app, 'GET', base(), { token: other.token })).status).toBe(403);
    expect((await api(t.app, 'GET', `${base()}/999999`, { token: owner.token })).status).toBe(404);
    expect((await api(t.app, 'POST', base(), { token: owner.token, body: { title: '' } })).status).toBe(400);

    expect((await api(t.app, 'DELETE', `${base()}/${r.body.id}`, { token: owner.token })).status).toBe(200);
    expect((await api(t.app, 'GET', `${base()}/${r.body.id}`, { token: owner.token })).status).toBe(404);
  });

  it('extracts TXT, Markdown, a PDF and a DOCX made here; renames and deletes sources', async () => {
    const id = await newNote();
    const txt = await upload(id, 'notes.txt', 'pelican migration data', { title: 'Field notes' });
    expect(txt.status).toBe(201);
    expect(txt.body).toEqual({ source_id: expect.any(Number), status: 'queued' });
    const md = await upload(id, 'plan.md', '# Plan\n\nThe heron plan.');
    const pdf = await upload(id, 'report.pdf', await makePdf('Hello pelican research from a PDF'));
    const docx = await upload(id, 'memo.docx', await makeDocx('Docx saffron memo text'));

    expect(await settled(id, txt.body.source_id)).toMatchObject({
      status: 'done',
      title: 'Field notes',
      source_type: 'txt',
      content_text: 'pelican migration data',
    });
    expect(await settled(id, md.body.source_id)).toMatchObject({ status: 'done', source_type: 'markdown' });
    const p = await settled(id, pdf.body.source_id);
    expect(p).toMatchObject({ status: 'done', source_type: 'pdf', title: 'report.pdf' });
    expect(p.content_text).toContain('Hello pelican research from a PDF');
    const d = await settled(id, docx.body.source_id);
    expect(d).toMatchObject({ status: 'done', source_type: 'docx' });
    expect(d.content_text).toContain('Docx saffron memo text');

    const list = await api(t.app, 'GET', base(), { token: owner.token });
    expect(list.body.find((n: { id: number }) => n.id === id).source_count).toBe(4);

    // Rename, then reset with '' and with null.
    const src = `${base()}/${id}/sources/${pdf.body.source_id}`;
    expect((await api(t.app, 'PATCH', src, { token: owner.token, body: { title: 'Annual' } })).body).toEqual({});
    expect((await settled(id, pdf.body.source_id)).title).toBe('Annual');
    await api(t.app, 'PATCH', src, { token: owner.token, body: { title: '' } });
    expect((await settled(id, pdf.body.source_id)).title).toBe('report.pdf');
    await api(t.app, 'PATCH', src, { token: owner.token, body: { title: 'X' } });
    await api(t.app, 'PATCH', src, { token: owner.token, body: { title: null } });
    expect((await settled(id, pdf.body.source_id)).title).toBe('report.pdf');

    // The progress stream of a finished source: one `progress` event, done.
    const prog = await api(t.app, 'GET', `${src}/progress`, { token: owner.token });
    expect(prog.status).toBe(200);
    expect(prog.text).toContain('event: progress');
    expect(prog.text).toContain('"status":"done"');

    // Delete a source: its row and file go.
    const dir = path.join(t.dataDir, 'notes', String(project.id), String(id));
    const before = fs.readdirSync(dir).length;
    expect((await api(t.app, 'DELETE', src, { token: owner.token })).status).toBe(200);
    expect(fs.readdirSync(dir).length).toBe(before - 1);
    expect((await api(t.app, 'DELETE', src, { token: owner.token })).status).toBe(404);
    expect((await api(t.app, 'PATCH', src, { token: owner.token, body: { title: 'y' } })).status).toBe(404);

    // Deleting the note removes its directory and every row.
    expect((await api(t.app, 'DELETE', `${base()}/${id}`, { token: owner.token })).status).toBe(200);
    expect(fs.existsSync(dir)).toBe(false);
    const left = await t.db.selectFrom('note_sources').select('id').where('note_id', '=', id).execute();
    expect(left).toEqual([]);
  });

  it('refuses unknown types and empty files; a broken PDF ends in error with its reason', async () => {
    const id = await newNote();
    const exe = await upload(id, 'run.exe', 'MZ');
    expect(exe.status).toBe(400);
    expect(exe.body.error).toBe('unsupported_type');
    expect((await upload(id, 'empty.txt', '')).body.error).toBe('empty_file');
    const bad = await upload(id, 'broken.pdf', 'not a pdf at all');
    expect(bad.status).toBe(201);
    expect(await settled(id, bad.body.source_id)).toMatchObject({
      status: 'error',
      error: 'The file could not be read as a PDF.',
    });
  });

  it('a DOCX that expands beyond its limit (a zip bomb) ends in error before it is read', async () => {
    const id = await newNote();
    const bomb = await makeDocxBomb(DOCX_INFLATED_LIMIT + 1024 * 1024);
    expect(bomb.length).toBeLessThan(2 * 1024 * 1024);
    const r = await upload(id, 'bomb.docx', bomb);
    expect(r.status).toBe(201);
    expect(await settled(id, r.body.source_id, 60_000)).toMatchObject({
      status: 'error',
      error: 'The document expands to more than 256 MB when unpacked, so it is not read.',
    });
    // The service is still there.
    expect((await api(t.app, 'GET', base(), { token: owner.token })).status).toBe(200);
  });

  it('audio without a speech server ends in error saying so', async () => {
    const id = await newNote();
    const r = await upload(id, 'talk.mp3', Buffer.from('ID3fake-audio'));
    expect(r.status).toBe(201);
    const s = await settled(id, r.body.source_id);
    expect(s.status).toBe('error');
    expect(s.error).toContain('SPEECH_URL');
  });

  it('describes an image with the vision model (the owner’s key), metered as note_source', async () => {
    const id = await newNote();
    llm.respond(() => ({ content: [{ type: 'text', text: 'A chart of otter numbers.' }] }));
    const r = await upload(id, 'chart.png', IMAGES.png);
    const s = await settled(id, r.body.source_id);
    expect(s).toMatchObject({ status: 'done', content_text: 'A chart of otter numbers.' });
    const call = llm.modelCalls().at(-1)!;
    expect(call.headers['x-api-key'] ?? call.headers.authorization).toMatch(/^(Bearer )?sk-user-test-key$/);
    expect(JSON.stringify(call.body.messages)).toContain('"type":"image"');
    const usage = await t.db.selectFrom('token_usage').select(['source']).where('source', '=', 'note_source').execute();
    expect(usage.length).toBeGreaterThan(0);
  });

  it('copies a file of the project directory; traversal is 403, unknown types 400, missing files 404', async () => {
    const id = await newNote();
    fs.mkdirSync(path.join(project.dir, 'docs'), { recursive: true });
    fs.writeFileSync(path.join(project.dir, 'docs', 'brief.md'), '# Brief\n\nThe ibis brief.');
    fs.writeFileSync(path.join(project.dir, 'tool.sh'), 'echo');
    const post = (body: unknown) => api(t.app, 'POST', `${base()}/${id}/sources`, { token: owner.token, body });
    const ok = await post({ file_path: 'docs/brief.md' });
    expect(ok.status).toBe(201);
    expect(await settled(id, ok.body.source_id)).toMatchObject({
      status: 'done',
      title: 'brief.md',
      content_text: '# Brief\n\nThe ibis brief.',
    });
    expect((await post({ file_path: '../../../etc/passwd' })).status).toBe(403);
    expect((await post({ file_path: '/etc/hosts' })).status).toBe(403);
    fs.symlinkSync('/etc/hostname', path.join(project.dir, 'link.txt'));
    expect((await post({ file_path: 'link.txt' })).status).toBe(403);
    expect((await post({ file_path: 'tool.sh' })).body.error).toBe('unsupported_type');
    expect((await post({ file_path: 'nope.md' })).status).toBe(404);
    expect((await post({ file_path: 'docs' })).status).toBe(400);
  });

  it('fetches a web page from an allowed host and keeps its main text; private addresses and redirects to them are refused', async () => {
    const id = await newNote();
    const post = (url: string) =>
      api(t.app, 'POST', `${base()}/${id}/sources`, { token: owner.token, body: { source_type: 'web', url } });
    const page = await post(`http://localhost:${site.port}/article`);
    expect(page.status).toBe(201);
    const s = await settled(id, page.body.source_id);
    expect(s.status).toBe('done');
    expect(s.content_text).toContain('quokka clause');
    expect(s.content_text).not.toContain('Login');

    const plain = await post(`http://localhost:${site.port}/plain`);
    expect((await settled(id, plain.body.source_id)).content_text).toBe('plain saffron text');

    for (const url of [
      `http://127.0.0.1:${site.port}/article`,
      'http://10.0.0.1/',
      'http://169.254.169.254/latest/meta-data/',
      `http://[::1]:${site.port}/article`,
      `http://localhost:${site.port}/redirect?to=${encodeURIComponent(`http://127.0.0.1:${site.port}/article`)}`,
      `http://localhost:${site.port}/redirect?to=${encodeURIComponent('http://169.254.169.254/')}`,
    ]) {
      const r = await post(url);
      expect(r.status).toBe(201);
      const e = await settled(id, r.body.source_id);
      expect(e.status, url).toBe('error');
      expect(e.error, url).toMatch(/refused/);
    }
    // Size limit: a 12 MB page is cut off with its reason.
    const huge = await settled(id, (await post(`http://localhost:${site.port}/huge`)).body.source_id);
    expect(huge).toMatchObject({ status: 'error' });
    expect(huge.error).toMatch(/larger than 10 MB/);

    for (const url of ['ftp://example.com/x', 'file:///etc/passwd', 'http://user:pw@example.com/', 'not a url'])
      expect((await post(url)).body.error, url).toBe('invalid_url');
    const yt = await api(t.app, 'POST', `${base()}/${id}/sources`, {
      token: owner.token,
      body: { source_type: 'youtube', url: 'https://example.com/watch?v=abc' },
    });
    expect(yt.body.error).toBe('invalid_url');
  });

  it('YouTube: English captions first, then the transcript service; when every step fails, each reason is kept', async () => {
    const id = await newNote();
    const yt = async (url: string) => {
      const r = await api(t.app, 'POST', `${base()}/${id}/sources`, {
        token: owner.token,
        body: { source_type: 'youtube', url },
      });
      expect(r.status).toBe(201);
      return settled(id, r.body.source_id);
    };
    expect(await yt('https://www.youtube.com/watch?v=aaaaaaaaaaa')).toMatchObject({
      status: 'done',
      content_text: 'Hello & welcome\nto the otters',
      title: 'YouTube video aaaaaaaaaaa',
    });
    expect(await yt('https://youtu.be/bbbbbbbbbbb')).toMatchObject({
      status: 'done',
      content_text: 'words from\nthe transcript service',
    });
    const s = await yt('https://youtu.be/dQw4w9WgXcQ');
    expect(s.status).toBe('error');
    expect(s.error).toContain('captions: the video has none');
    expect(s.error).toContain('transcript service: request failed: The site answered HTTP 404.');
    expect(s.error).toContain('audio: no speech server is configured (SPEECH_URL)');
  });

  it('chunked upload: sequential chunks, 409 out of order, 413 oversized, the last chunk queues the source', async () => {
    const id = await newNote();
    const size = CHUNK_SIZE + 1000;
    const init = await api(t.app, 'POST', `${base()}/${id}/sources/chunk-init`, {
      token: owner.token,
      body: { filename: 'long.mp3', mime: 'audio/mpeg', size },
    });
    expect(init.status).toBe(201);
    expect(init.body).toEqual({ upload_id: expect.stringMatching(/^[a-f0-9]{32}$/), chunk_size: CHUNK_SIZE });
    const url = `${base()}/${id}/sources/chunks/${init.body.upload_id}`;
    const send = (index: number, payload: Buffer) =>
      api(t.app, 'POST', url, {
        token: owner.token,
        payload,
        headers: { 'content-type': 'application/octet-stream', 'x-chunk-index': String(index) },
      });
    const first = Buffer.alloc(CHUNK_SIZE, 'a');
    expect((await send(1, Buffer.from('x'))).status).toBe(409);
    const r0 = await send(0, first);
    expect(r0.status).toBe(200);
    expect(r0.body).toEqual({ received_bytes: CHUNK_SIZE });
    expect((await send(0, first)).status).toBe(409);
    expect((await send(1, Buffer.alloc(1001, 'b'))).status).toBe(413);
    const last = await send(1, Buffer.alloc(1000, 'b'));
    expect(last.status).toBe(201);
    expect(last.body).toEqual({ done: true, source_id: expect.any(Number), status: 'queued' });
    // The file arrived whole (processing it needs a speech server, which this test has none of).
    const s = await settled(id, last.body.source_id);
    expect(s).toMatchObject({ source_type: 'audio', title: 'long.mp3', size_bytes: size, status: 'error' });
    const dir = path.join(t.dataDir, 'notes', String(project.id), String(id));
    const [stored] = fs.readdirSync(dir);
    expect(fs.statSync(path.join(dir, stored)).size).toBe(size);
    expect((await send(2, Buffer.from('x'))).status).toBe(404);
    expect(fs.readdirSync(path.join(t.dataDir, 'notes', 'uploads')).filter((f) => f.endsWith('.part'))).toEqual([]);
  });

  it('chunk-init validates type and size up front and allows 10 live sessions per user; idle ones expire', async () => {
    const id = await newNote();
    const init = (body: unknown) =>
      api(t.app, 'POST', `${base()}/${id}/sources/chunk-init`, { token: owner.token, body });
    expect((await init({ filename: 'a.exe', mime: 'x', size: 10 })).body.error).toBe('unsupported_type');
    const big = await init({ filename: 'a.pdf', mime: 'application/pdf', size: 200 * 1024 * 1024 });
    expect(big.status).toBe(413);
    const ids: string[] = [];
    for (let i = 0; i < MAX_UPLOAD_SESSIONS; i++) {
      const r = await init({ filename: `v${i}.mp4`, mime: 'video/mp4', size: 1_500_000_000 });
      expect(r.status).toBe(201);
      ids.push(r.body.upload_id);
    }
    const over = await init({ filename: 'v.mp4', mime: 'video/mp4', size: 10 });
    expect(over.status).toBe(429);
    expect(over.body.error).toBe('too_many_uploads');

    // Idle for more than 30 minutes: the sweep removes the rows and their bytes; a new session fits again.
    await t.db
      .updateTable('note_uploads')
      .set({ updated_at: new Date(Date.now() - 31 * 60_000) })
      .where('user_id', '=', owner.id)
      .execute();
    expect((await init({ filename: 'v.mp4', mime: 'video/mp4', size: 10 })).status).toBe(201);
    const swept = await t.services.notes.sweep();
    expect(swept.uploads).toBe(MAX_UPLOAD_SESSIONS);
    const parts = fs.readdirSync(path.join(t.dataDir, 'notes', 'uploads'));
    for (const u of ids) expect(parts).not.toContain(`${u}.part`);
    const expired = await api(t.app, 'POST', `${base()}/${id}/sources/chunks/${ids[0]}`, {
      token: owner.token,
      payload: Buffer.from('x'),
      headers: { 'content-type': 'application/octet-stream', 'x-chunk-index': '0' },
    });
    expect(expired.status).toBe(404);
    await t.db.deleteFrom('note_uploads').where('user_id', '=', owner.id).execute();
  });

  it('chat streams deltas, creates a linked issue through the tool, resumes, cites and keeps history', async () => {
    const id = await newNote('Birds');
    const txt = await upload(id, 'birds.txt', 'The heron population doubled in 2025 near the lake.');
    await settled(id, txt.body.source_id);
    const bad = await api(t.app, 'POST', `${base()}/${id}/sources`, {
      token: owner.token,
      body: { source_type: 'web', url: 'http://10.1.2.3/' },
    });
    await settled(id, bad.body.source_id);

    llm.respond(() => ({ content: [{ type: 'text', text: 'fallback' }] }));
    llm.enqueue(
      {
        content: [
          { type: 'text', text: 'Creating it. ' },
          { type: 'tool_use', name: 'create_issue', input: { title: 'Count herons', priority: 'p1' } },
        ],
      },
      { content: [{ type: 'text', text: 'Done: the heron count doubled [S' + txt.body.source_id + '].' }] },
    );
    const calls = llm.modelCalls().length;
    const r = await api(t.app, 'POST', `${base()}/${id}/chat`, {
      token: owner.token,
      body: { message: 'Make an issue to count herons', selectedSourceIds: [txt.body.source_id, bad.body.source_id] },
    });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toContain('text/event-stream');
    expect(r.text).toContain('event: text_delta');
    expect(r.text).toMatch(
      /event: tool_result\ndata: \{"tool":"create_issue","issue_id":\d+,"title":"Count herons","priority":"P1"\}/,
    );
    expect(r.text).toContain('event: done');
    const made = llm.modelCalls().slice(calls);
    expect(made).toHaveLength(2);
    // Grounded: the source's text, the citation rule, and the guard for the unprocessed source.
    expect(made[0].body.system).toContain('heron population doubled');
    expect(made[0].body.system).toContain('[S1 p. 12]');
    expect(made[0].body.system).toContain('Grounding guard');
    expect(made[1].body.messages.at(-1).content[0]).toMatchObject({ type: 'tool_result' });

    const detail = await api(t.app, 'GET', `${base()}/${id}`, { token: owner.token });
    expect(detail.body.issue_links).toEqual([{ issue_id: expect.any(Number), title: 'Count herons' }]);
    expect(detail.body.chats.map((c: { role: string }) => c.role)).toEqual(['user', 'assistant']);
    expect(detail.body.chats[1].content).toContain('heron count doubled');
    expect(detail.body.chats[1].sources).toEqual([{ source_id: txt.body.source_id, title: 'birds.txt' }]);
    const issue = await api(
      t.app,
      'GET',
      `/api/crm/projects/${project.name}/issues/${detail.body.issue_links[0].issue_id}`,
      {
        token: owner.token,
      },
    );
    expect(issue.body).toMatchObject({ title: 'Count herons', priority: 'P1' });
    const metered = await t.db.selectFrom('token_usage').select('source').where('source', '=', 'note_chat').execute();
    expect(metered.length).toBe(2);

    // The privacy export holds the note with its sources' text, chat and links (no file bytes).
    const notesData = t.services.personalData.find((d) => d.area === 'notes')!;
    const exported = (await notesData.exportProject!(project.id)) as Array<Record<string, any>>;
    const mine = exported.find((n) => n.id === id)!;
    expect(mine.sources.map((s: { id: number }) => s.id)).toContain(txt.body.source_id);
    expect(mine.chats).toHaveLength(2);
    expect(mine.issue_links).toHaveLength(1);

    // A selected source of another note is refused before any model call.
    const other = await newNote();
    const bad2 = await api(t.app, 'POST', `${base()}/${other}/chat`, {
      token: owner.token,
      body: { message: 'hi', selectedSourceIds: [txt.body.source_id] },
    });
    expect(bad2.status).toBe(400);
    expect(bad2.body.error).toBe('unknown_source');
  });

  it('chat without an LLM key answers 400 before streaming', async () => {
    const u = await createUser(t);
    const p = await createProject(t, u.id);
    const n = await api(t.app, 'POST', `/api/crm/projects/${p.name}/notes`, { token: u.token, body: { title: 'k' } });
    const r = await api(t.app, 'POST', `/api/crm/projects/${p.name}/notes/${n.body.id}/chat`, {
      token: u.token,
      body: { message: 'hello' },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('llm_key_required');
  });
});
