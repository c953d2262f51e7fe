/**
 * Citations a reader can check (docs/ARCHITECTURE.md, Citations and locations): search hits of research-note sources
 * carry their page, timecode, heading and lines; the chat's citations event names only passages that were in the
 * model's context; a source longer than the index's limit says it was indexed in part.
 */
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { Document, HeadingLevel, Packer, Paragraph } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, buildTestApp, createProject, createUser, multipartBody, type TestApp } from '../../../test/helpers.ts';
import { makeWav } from '../../../test/media-fixtures.ts';
import { giveKey } from '../../../test/runtime-fixtures.ts';
import { startLlmStandIn, type RecordedRequest } from '../../../test/standins/llm.ts';
import { startSpeechStandIn } from '../../../test/standins/speech.ts';
import { INDEX_MAX_CHARS } from './notes.service.ts';

/** A PDF with one page per text (Helvetica, wrapped at ~90 characters a line). */
async function makePages(pages: string[]): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (const text of pages) {
    const page = pdf.addPage();
    const lines = text.match(/.{1,90}(\s|$)/g) ?? [text];
    lines.forEach((l, i) => page.drawText(l.trim(), { x: 40, y: 760 - i * 14, font, size: 10 }));
  }
  return Buffer.from(await pdf.save());
}

/** `n` filler sentences of a topic word (so each page or segment is its own passage). */
const filler = (word: string, n: number) =>
  Array.from({ length: n }, (_, i) => `Sentence ${i} of the ${word} section.`).join(' ');

const systemOf = (r: RecordedRequest): string =>
  typeof r.body.system === 'string'
    ? r.body.system
    : (r.body.system as Array<{ text: string }>).map((b) => b.text).join('');

/** The events of an SSE answer, in order. */
const sseEvents = (text: string) =>
  text
    .split('\n\n')
    .map((block) => {
      const event = /^event: (.+)$/m.exec(block)?.[1];
      const data = /^data: (.+)$/m.exec(block)?.[1];
      return event ? { event, data: data ? JSON.parse(data) : null } : null;
    })
    .filter((e): e is { event: string; data: any } => e !== null);

describe('citations and locations', () => {
  let t: TestApp;
  let llm: Awaited<ReturnType<typeof startLlmStandIn>>;
  let speech: Awaited<ReturnType<typeof startSpeechStandIn>>;
  let owner: Awaited<ReturnType<typeof createUser>>;
  let project: Awaited<ReturnType<typeof createProject>>;
  let tmp: string;
  const base = () => `/api/crm/projects/${project.name}/notes`;
  const segments = [
    { start: 0, end: 41.5, text: `The kiwi part. ${filler('kiwi', 24)}` },
    { start: 41.5, end: 83, text: `The kakapo part: a flightless night parrot. ${filler('kakapo', 24)}` },
    { start: 83, end: 125.25, text: `The takahe part. ${filler('takahe', 24)}` },
  ];

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cite-'));
    llm = await startLlmStandIn();
    speech = await startSpeechStandIn({ respond: () => ({ text: 'unused', segments }) });
    t = await buildTestApp({
      env: { LLM_PROVIDER: 'anthropic', LLM_BASE_URL: llm.anthropicUrl, SPEECH_URL: speech.url },
    });
    owner = await createUser(t);
    project = await createProject(t, owner.id);
    await giveKey(t, owner.id);
  });
  afterAll(async () => {
    await t?.close();
    await llm?.close();
    await speech?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const newNote = async (title = 'Research') =>
    (await api(t.app, 'POST', base(), { token: owner.token, body: { title } })).body.id as number;
  const upload = async (noteId: number, filename: string, value: Buffer | string) => {
    const r = await api(t.app, 'POST', `${base()}/${noteId}/sources`, {
      token: owner.token,
      ...multipartBody([{ name: 'file', value, filename }]),
    });
    expect(r.status).toBe(201);
    return r.body.source_id as number;
  };
  /** Poll the note until the source is done and indexed (its `indexed_chars` known). */
  const indexed = async (noteId: number, sourceId: number, ms = 30_000) => {
    const end = Date.now() + ms;
    for (;;) {
      const r = await api(t.app, 'GET', `${base()}/${noteId}`, { token: owner.token });
      const s = r.body.sources.find((x: { id: number }) => x.id === sourceId);
      if (s?.status === 'error') throw new Error(`source ${sourceId}: ${s.error}`);
      if (s?.status === 'done' && s.indexed_chars !== null) return s;
      if (Date.now() > end) throw new Error(`source ${sourceId} still ${s?.status}, not indexed`);
      await new Promise((res) => setTimeout(res, 50));
    }
  };
  const search = (q: string, extra = '') =>
    api(t.app, 'GET', `/api/crm/projects/${project.name}/rag/search?q=${encodeURIComponent(q)}&k=25${extra}`, {
      token: owner.token,
    });
  const hitOf = (hits: any[], sourceId: number, word: string) =>
    hits.find((h) => h.doc_type === 'note_source' && h.doc_id === String(sourceId) && h.text.includes(word));

  it('search hits carry the page range of a PDF, the timecodes of a recording, the heading and lines of Markdown', async () => {
    const id = await newNote('Birds');
    const pdf = await upload(
      id,
      'atlas.pdf',
      await makePages([
        `Walrus page. ${filler('walrus', 30)}`,
        `Narwhal page. ${filler('narwhal', 30)}`,
        `Manatee page. ${filler('manatee', 30)}`,
      ]),
    );
    const wav = await upload(id, 'talk.wav', fs.readFileSync(makeWav(path.join(tmp, 'talk.wav'), 2)));
    const md = await upload(
      id,
      'guide.md',
      '# Guide\n\nIntro text.\n\n## Setup\n\nInstall it.\n\n### Database\n\nThe pelican cluster holds the data.\n',
    );
    const docx = await upload(
      id,
      'memo.docx',
      await Packer.toBuffer(
        new Document({
          sections: [
            {
              children: [
                new Paragraph({ text: 'Setup', heading: HeadingLevel.HEADING_1 }),
                new Paragraph('Install the tools.'),
                new Paragraph({ text: 'Database', heading: HeadingLevel.HEADING_2 }),
                new Paragraph('The saffron replica serves reads.'),
              ],
            },
          ],
        }),
      ),
    );
    await indexed(id, pdf);
    await indexed(id, wav);
    await indexed(id, md);
    await indexed(id, docx);

    // PDF: the passage holding page 2's words starts on page 2 or runs onto it; its text is of that page.
    const hits = (await search('narwhal section', '&doc_types=note_source')).body.hits;
    const p = hitOf(hits, pdf, 'narwhal');
    expect(p).toBeDefined();
    expect(p.location.page).toBeLessThanOrEqual(2);
    expect(p.location.page_end ?? p.location.page).toBeGreaterThanOrEqual(2);
    expect(p.location.line_start).toBeUndefined();
    const pages = (await search('manatee walrus narwhal', '&doc_types=note_source')).body.hits
      .filter((h: any) => h.doc_id === String(pdf))
      .map((h: any) => h.location);
    expect(pages.some((l: any) => l.page === 3 || l.page_end === 3)).toBe(true);
    expect(pages.some((l: any) => l.page === 1)).toBe(true);

    // Recording: the passage of the kakapo segment starts at a segment's start and ends at a segment's end.
    const a = hitOf((await search('kakapo night parrot')).body.hits, wav, 'kakapo');
    expect(a).toBeDefined();
    expect([0, 41_500]).toContain(a.location.start_ms);
    expect([83_000, 125_250]).toContain(a.location.end_ms);
    expect(a.location.page).toBeUndefined();

    // Markdown: heading path and lines.
    const m = hitOf((await search('pelican cluster data')).body.hits, md, 'pelican');
    expect(m.location).toEqual({ heading: 'Guide › Setup › Database', line_start: 11, line_end: 11 });
    expect(m.chunk_id).toEqual(expect.any(Number));
    // DOCX: its headings are kept, so passages know their section.
    const d = hitOf((await search('saffron replica reads')).body.hits, docx, 'saffron');
    expect(d.location).toEqual({ heading: 'Setup › Database', line_start: 7, line_end: 7 });

    // The files a citation opens: the PDF and the recording (ranges for seeking); other kinds have none to open.
    const fileOf = (sourceId: number, headers: Record<string, string> = {}, token = owner.token) =>
      api(t.app, 'GET', `${base()}/${id}/sources/${sourceId}/file`, { token, headers });
    const whole = await fileOf(pdf);
    expect(whole.status).toBe(200);
    expect(whole.headers['content-type']).toBe('application/pdf');
    expect(whole.headers['x-content-type-options']).toBe('nosniff');
    const part = await fileOf(wav, { range: 'bytes=0-11' });
    expect(part.status).toBe(206);
    expect(part.headers['content-type']).toBe('audio/wav');
    expect(part.headers['content-range']).toMatch(/^bytes 0-11\/\d+$/);
    expect((await fileOf(wav, { range: 'bytes=999999999-' })).status).toBe(416);
    const none = await fileOf(md);
    expect(none.status).toBe(404);
    expect(none.body.error).toBe('no_file');
    expect((await fileOf(pdf, {}, (await createUser(t)).token)).status).toBe(403);

    // Note passages are searched unless doc_types leaves them out.
    expect((await search('pelican cluster data', '&doc_types=wiki,issue')).body.hits).toEqual([]);
    expect(hitOf((await search('pelican cluster data')).body.hits, md, 'pelican')).toBeDefined();
  });

  it('the chat cites passages of its context with their place and a quote; an invented label is dropped', async () => {
    const id = await newNote('Atlas');
    const pdf = await upload(
      id,
      'atlas.pdf',
      await makePages([
        `Walrus page. ${filler('walrus', 30)}`,
        `Narwhal tusks grow to three metres. ${filler('narwhal', 30)}`,
      ]),
    );
    await indexed(id, pdf);
    // The model cites the passage holding the narwhal words (found in its context) and an S99 it invents.
    let cited = '';
    llm.respond((req) => {
      const system = systemOf(req);
      const m = /<passage id="(S\d+)"[^>]*where="([^"]*)">\n[^<]*Narwhal tusks/.exec(system);
      cited = m?.[1] ?? 'none';
      return {
        content: [
          { type: 'text', text: `Narwhal tusks reach three metres [${cited} ${m?.[2]}]. Whales sing [S99 p. 4].` },
        ],
      };
    });
    const r = await api(t.app, 'POST', `${base()}/${id}/chat`, {
      token: owner.token,
      body: { message: 'How long are narwhal tusks?' },
    });
    expect(r.status).toBe(200);
    const events = sseEvents(r.text);
    const names = events.map((e) => e.event);
    expect(names.indexOf('citations')).toBeGreaterThan(-1);
    expect(names.indexOf('citations')).toBe(names.indexOf('done') - 1);
    const { citations } = events.find((e) => e.event === 'citations')!.data;
    expect(cited).toMatch(/^S\d+$/);
    expect(citations).toHaveLength(1);
    expect(citations[0]).toMatchObject({
      marker: cited,
      source_id: pdf,
      chunk_id: expect.any(Number),
      location: { page: expect.any(Number) },
    });
    expect(citations[0].location.page_end ?? citations[0].location.page).toBe(2);
    expect(citations[0].quote).toContain('Narwhal tusks grow to three metres');
    // The quote is text of the passage the model read.
    const system = systemOf(llm.modelCalls().at(-1)!);
    expect(system).toContain(citations[0].quote);
    expect(system).toContain('[S1 p. 12]');
    // The answer's citations are kept with it.
    const detail = await api(t.app, 'GET', `${base()}/${id}`, { token: owner.token });
    expect(detail.body.chats.at(-1).citations).toEqual(citations);
    llm.respond(() => ({ content: [{ type: 'text', text: 'ok' }] }));
  });

  it('a source longer than the index limit is indexed in part and says so; a short one is whole', async () => {
    const id = await newNote('Long');
    const line = 'The long ledger records one more otter sighting today.\n';
    const long = line.repeat(Math.ceil((INDEX_MAX_CHARS + 5000) / line.length));
    const big = await upload(id, 'ledger.txt', long);
    const small = await upload(id, 'short.txt', 'A short otter note.');
    const s = await indexed(id, big, 120_000);
    expect(s.index_partial).toBe(true);
    expect(s.indexed_chars).toBeGreaterThan(INDEX_MAX_CHARS * 0.9);
    expect(s.indexed_chars).toBeLessThanOrEqual(INDEX_MAX_CHARS);
    expect(s.content_text.length).toBe(long.length);
    const short = await indexed(id, small);
    expect(short).toMatchObject({ index_partial: false, indexed_chars: 'A short otter note.'.length });
  }, 180_000);
});
