/**
 * Benchmark of citations a reader can check: `npx tsx bench/citations.ts`.
 *
 * A golden set the bench makes itself, through the service's own extraction and indexing paths:
 *  - 4 PDFs of 5 pages (pdf-lib), each page filler text and one fact; read with the service's PDF reader
 *    (`pdfPages`: the text layer per page, through pdf.js);
 *  - 3 recordings (WAV tones made with ffmpeg) transcribed through the speech stand-in, which answers timed
 *    segments (one fact in each of 6 of them); read with the service's audio path (`extractFile('audio', …)`:
 *    ffmpeg to 16 kHz mono, the OpenAI-compatible speech client);
 *  - 3 Markdown documents with 6 headed sections (`##` / `###`), one fact in each.
 * 56 questions, each with the passage that answers it (the fact's sentence) and where it is (page, segment,
 * heading). The sources are indexed as research-note sources (`indexLoaded` with their page/segment marks), then
 * each question is searched as the notes chat does (k = 6, the note's sources).
 *
 * Figures, for the local embedder and for an OpenAI-compatible embeddings stand-in (the LLM stand-in's
 * `/v1/embeddings`, a hashed bag of words, 64 dimensions):
 *  - recall@6: share of questions with a hit among the first 6 that holds the answer span and whose location points
 *    at the answer's place (its page range holds the page; its timecodes hold the segment; its heading is the
 *    section's);
 *  - citation precision: the answer a model gives cites its best passage (`[S1 <place>]`); the service's citation
 *    rule (`citationsOf`: only passages of the context) maps it to a passage; precise when that passage holds the
 *    answer span and its location points at the answer's place; `quote_hit`: the citation's quote holds the span;
 *  - location accuracy: among all hits holding the answer span, the share whose location points at its place.
 * No baseline of an older build: before, a citation named only the source (no place), so its location accuracy was 0.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { openDatabase } from '../server/src/db/database.ts';
import { migrateToLatest } from '../server/src/db/migrate.ts';
import { createJobQueue } from '../server/src/jobs/queue.ts';
import type { PassageLocation, TextMark } from '../server/src/lib/doc-sources.ts';
import { locationLabel } from '../server/src/lib/doc-sources.ts';
import { createMedia } from '../server/src/lib/media.ts';
import { createKnowledgeIndex } from '../server/src/modules/knowledge/knowledge.index.ts';
import { createKnowledgeRepo } from '../server/src/modules/knowledge/knowledge.repo.ts';
import { extractFile, pdfPages } from '../server/src/modules/notes/notes.extract.ts';
import { citationsOf, type ContextPassage } from '../server/src/modules/notes/notes.rules.ts';
import { createLocalEmbedder, createOpenAiEmbedder, type Embedder } from '../server/src/providers/embeddings/index.ts';
import { createSpeech } from '../server/src/providers/speech/index.ts';
import { makeWav } from '../server/test/media-fixtures.ts';
import { startLlmStandIn } from '../server/test/standins/llm.ts';
import { startSpeechStandIn } from '../server/test/standins/speech.ts';
import { rng } from './lib/rag-corpus.ts';
import { benchLine } from './lib/util.ts';

const K = 6;

const rand = rng(11);
const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)];
const SYL = [
  'ka',
  'lo',
  'mi',
  'ne',
  'ru',
  'ta',
  'vo',
  'zi',
  'pe',
  'sa',
  'du',
  'fo',
  'gi',
  'ha',
  'ju',
  'ke',
  'ly',
  'mo',
];
const used = new Set<string>();
/** A made-up word not used before (so a fact's names are its own). */
function word(syllables = 3): string {
  for (;;) {
    const w = Array.from({ length: syllables }, () => pick(SYL)).join('');
    if (!used.has(w)) {
      used.add(w);
      return w;
    }
  }
}
const COMMON = Array.from({ length: 250 }, () => word(2));
/** Filler sentences of common words (the same vocabulary in every document). */
const filler = (chars: number) => {
  const out: string[] = [];
  let n = 0;
  while (n < chars) {
    const s = `${Array.from({ length: 8 + Math.floor(rand() * 8) }, () => pick(COMMON)).join(' ')}.`;
    out.push(s[0].toUpperCase() + s.slice(1));
    n += s.length + 1;
  }
  return out.join(' ');
};
const RELATIONS: Array<[string, string]> = [
  ['was founded in the town of', 'Where was {e} founded?'],
  ['keeps its archive in', 'Where does {e} keep its archive?'],
  ['was designed by the engineer', 'Who designed {e}?'],
  ['trades mostly with', 'With whom does {e} trade mostly?'],
  ['is measured with the instrument', 'Which instrument measures {e}?'],
  ['was renamed after the river', 'After which river was {e} renamed?'],
];
/** A fact sentence and its question. */
function fact(): { sentence: string; question: string } {
  const e = word(3);
  const [rel, q] = pick(RELATIONS);
  const value = word(3);
  const cap = e[0].toUpperCase() + e.slice(1);
  return { sentence: `The ${cap} ${rel} ${value}.`, question: q.replace('{e}', `the ${cap}`) };
}

interface Gold {
  doc: string;
  span: string;
  question: string;
  page?: number;
  startMs?: number;
  endMs?: number;
  heading?: string;
}
interface Source {
  doc: string;
  title: string;
  text: string;
  marks?: TextMark[];
}

const norm = (s: string) => s.replace(/\s+/g, ' ').trim();

/** Whether a hit's location points at the gold's place. */
function pointsAt(loc: PassageLocation, g: Gold): boolean {
  if (g.page !== undefined) return loc.page !== undefined && loc.page <= g.page && (loc.page_end ?? loc.page) >= g.page;
  if (g.startMs !== undefined)
    return (
      loc.start_ms !== undefined && loc.end_ms !== undefined && loc.start_ms <= g.startMs && loc.end_ms >= g.endMs!
    );
  return loc.heading === g.heading;
}

async function makePdf(pages: string[]): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (const text of pages) {
    const page = pdf.addPage();
    const lines = text.match(/.{1,95}(\s|$)/g) ?? [text];
    lines.forEach((l, i) => page.drawText(l.trim(), { x: 30, y: 800 - i * 12, font, size: 9 }));
  }
  return Buffer.from(await pdf.save());
}

async function buildGoldenSet(tmp: string, speechUrl: string, speech: Awaited<ReturnType<typeof startSpeechStandIn>>) {
  const sources: Source[] = [];
  const gold: Gold[] = [];
  // PDFs: 5 pages of ~2,000 characters, the fact at a random place of the page.
  for (let d = 0; d < 4; d++) {
    const doc = `pdf-${d}`;
    const pages: string[] = [];
    for (let p = 0; p < 5; p++) {
      const f = fact();
      const before = filler(200 + Math.floor(rand() * 1400));
      pages.push(`${before} ${f.sentence} ${filler(1900 - before.length)}`);
      gold.push({ doc, span: f.sentence, question: f.question, page: p + 1 });
    }
    const { text, marks } = await pdfPages(new Uint8Array(await makePdf(pages)));
    sources.push({ doc, title: `report-${d}.pdf`, text, marks });
  }
  // Recordings: 30 segments of ~8 s, a fact in 6 of them.
  const media = createMedia();
  const provider = createSpeech({ speechUrl, speechModel: 'whisper-1', speechKey: undefined });
  for (let d = 0; d < 3; d++) {
    const doc = `rec-${d}`;
    const segs: Array<{ start: number; end: number; text: string }> = [];
    const factAt = new Set<number>();
    while (factAt.size < 6) factAt.add(Math.floor(rand() * 30));
    let t = 0;
    for (let i = 0; i < 30; i++) {
      const len = 5 + rand() * 6;
      let text = filler(120 + Math.floor(rand() * 120));
      if (factAt.has(i)) {
        const f = fact();
        text = `${filler(60)} ${f.sentence} ${filler(60)}`;
        gold.push({
          doc,
          span: f.sentence,
          question: f.question,
          startMs: Math.round(t * 1000),
          endMs: Math.round((t + len) * 1000),
        });
      }
      segs.push({ start: t, end: t + len, text });
      t += len;
    }
    speech.respond(() => ({ text: segs.map((s) => s.text).join(' '), segments: segs }));
    const wav = makeWav(path.join(tmp, `rec-${d}.wav`), 2);
    const work = fs.mkdtempSync(path.join(tmp, 'work-'));
    const r = await extractFile('audio', wav, {
      media,
      speech: provider,
      allow: [],
      youtubeBaseUrl: 'https://www.youtube.com',
      ytDlpPath: 'yt-dlp',
      tmpDir: work,
      describeImage: async () => '',
      progress: async () => {},
    });
    sources.push({ doc, title: `meeting-${d}.wav`, text: r.text, marks: r.marks });
  }
  // Markdown: 3 chapters (##) of 2 sections (###), ~1,500 characters each, a fact in each section.
  for (let d = 0; d < 3; d++) {
    const doc = `md-${d}`;
    const parts = [`# Handbook ${d}`, filler(300)];
    for (let c = 0; c < 3; c++) {
      const chapter = `Chapter ${word(3)}`;
      parts.push(`## ${chapter}`, filler(200));
      for (let s = 0; s < 2; s++) {
        const section = `Section ${word(3)}`;
        const f = fact();
        const before = filler(100 + Math.floor(rand() * 1000));
        parts.push(`### ${section}`, `${before} ${f.sentence} ${filler(1400 - before.length)}`);
        gold.push({ doc, span: f.sentence, question: f.question, heading: `${chapter} › ${section}` });
      }
    }
    sources.push({ doc, title: `Handbook ${d}`, text: parts.join('\n\n') });
  }
  return { sources, gold };
}

interface Row {
  embedder: string;
  chunks: number;
  recall: number;
  precision: number;
  quoteHit: number;
  locationAccuracy: number;
}

async function runWith(label: string, embedder: Embedder, sources: Source[], gold: Gold[], tmp: string): Promise<Row> {
  const dir = fs.mkdtempSync(path.join(tmp, 'db-'));
  const database = await openDatabase({ url: 'memory://', dataDir: dir });
  try {
    await migrateToLatest(database.db);
    const quiet = { warn() {}, info() {}, error() {} };
    const index = createKnowledgeIndex({
      repo: createKnowledgeRepo(database.db),
      database,
      embedder,
      loaders: {},
      jobs: createJobQueue(database, quiet),
      log: quiet,
    });
    await index.start();
    const user = await database.db
      .insertInto('users')
      .values({ email: `bench-${Date.now()}@example.com`, password_hash: 'x', chat_id: null, name: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    const project = await database.db
      .insertInto('projects')
      .values({ owner_id: user.id, name: 'cite-bench', display_name: 'Cite bench' })
      .returning('id')
      .executeTakeFirstOrThrow();
    for (const s of sources)
      await index.indexLoaded(
        { project_id: project.id, doc_type: 'note_source', doc_id: s.doc },
        { title: s.title, text: s.text, scope: 'project', marks: s.marks },
      );
    const count = await database.db
      .selectFrom('knowledge_chunks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();

    let found = 0;
    let precise = 0;
    let cited = 0;
    let quoteHit = 0;
    let spanHits = 0;
    let spanHitsPlaced = 0;
    for (const g of gold) {
      const hits = await index.search({
        q: g.question,
        k: K,
        projectIds: [project.id],
        includeGlobal: false,
        docTypes: ['note_source'],
        docIds: sources.map((s) => s.doc),
      });
      const span = norm(g.span);
      const holds = (h: { doc_id: string; text: string }) => h.doc_id === g.doc && norm(h.text).includes(span);
      if (hits.some((h) => holds(h) && pointsAt(h.location, g))) found++;
      for (const h of hits.filter(holds)) {
        spanHits++;
        if (pointsAt(h.location, g)) spanHitsPlaced++;
      }
      // The chat's citation path: passages labelled S1…, the model cites its best passage with its place.
      const passages: ContextPassage[] = hits.map((h, i) => ({
        marker: `S${i + 1}`,
        source_id: 0,
        chunk_id: h.chunk_id,
        location: h.location,
        title: h.title,
        text: h.text,
      }));
      if (!passages.length) continue;
      const answer = `${g.question.replace(/\?$/, '')}: as the source says [S1 ${locationLabel(passages[0].location)}].`;
      for (const c of citationsOf(answer, passages)) {
        cited++;
        const p = passages.find((x) => x.chunk_id === c.chunk_id)!;
        if (p.text && norm(p.text).includes(span) && hits[0].doc_id === g.doc && pointsAt(c.location, g)) precise++;
        if (norm(c.quote).includes(span)) quoteHit++;
      }
    }
    return {
      embedder: label,
      chunks: Number(count.n),
      recall: found / gold.length,
      precision: cited ? precise / cited : 0,
      quoteHit: cited ? quoteHit / cited : 0,
      locationAccuracy: spanHits ? spanHitsPlaced / spanHits : 0,
    };
  } finally {
    await database.close();
  }
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cite-bench-'));
  const speech = await startSpeechStandIn();
  const llm = await startLlmStandIn({ embeddingDims: 64 });
  try {
    process.stderr.write('making the golden set (PDFs, recordings through the speech stand-in, Markdown)…\n');
    const { sources, gold } = await buildGoldenSet(tmp, speech.url, speech);
    const counts = { pdf: 0, audio: 0, markdown: 0 };
    for (const g of gold) counts[g.page ? 'pdf' : g.startMs !== undefined ? 'audio' : 'markdown']++;
    process.stderr.write(`${gold.length} questions (${JSON.stringify(counts)}); indexing and searching…\n`);
    const rows = [
      await runWith('local (256 dims)', createLocalEmbedder(), sources, gold, tmp),
      await runWith(
        'OpenAI-compatible stand-in (64 dims)',
        createOpenAiEmbedder({ baseUrl: llm.openaiUrl, model: 'text-embedding-3-small', apiKey: 'bench' }),
        sources,
        gold,
        tmp,
      ),
    ];
    const f = (n: number) => n.toFixed(3);
    process.stdout.write(
      [
        '',
        `Citations benchmark: ${gold.length} questions over ${sources.length} sources (4 PDFs × 5 pages, 3 recordings × 30 segments, 3 Markdown × 6 sections), k = ${K}`,
        '',
        '| embedder | chunks | recall@6 | citation precision | quote holds the span | location accuracy |',
        '|---|---|---|---|---|---|',
        ...rows.map(
          (r) =>
            `| ${r.embedder} | ${r.chunks} | ${f(r.recall)} | ${f(r.precision)} | ${f(r.quoteHit)} | ${f(r.locationAccuracy)} |`,
        ),
        '',
      ].join('\n'),
    );
    for (const r of rows)
      benchLine(`citations (${r.embedder})`, {
        recall_at_6: +f(r.recall),
        citation_precision: +f(r.precision),
        quote_hit: +f(r.quoteHit),
        location_accuracy: +f(r.locationAccuracy),
        questions: gold.length,
        baseline: 'none: before, a citation named only the source (location accuracy 0)',
      });
  } finally {
    await speech.close();
    await llm.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
