/**
 * Benchmark of the shared semantic index (issue 5): `npx tsx bench/rag.ts`.
 *
 * Builds 100,000 chunks across 100 projects (synthetic Markdown: 2,000 documents of 50 headed sections,
 * Zipf-distributed words from a 6,000-word vocabulary) through the real indexing path (`indexLoaded`:
 * chunking, local embedder, one transaction per document), then runs 200 searches of a few words taken
 * from a random chunk of a random project, and prints one table:
 *  - indexing rate (chunks/s),
 *  - hybrid search (`search`, k = 6, project + global) latency p50 / p95,
 *  - recall@6 of the vector channel as the app runs it against an exact scan of the same candidates, for
 *    project-scoped queries (≤ 20,000 candidates: the app itself scans exactly) and for queries over all 100
 *    projects (100,000 candidates: the HNSW index does the work).
 * Databases: the embedded one (PGlite with pgvector, in memory) and, when `DATABASE_URL` names a
 * PostgreSQL server, a database created on it for the run and dropped afterwards.
 * `BENCH_CHUNKS` (default 100000) and `BENCH_QUERIES` (default 200) scale it down for a quick look.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openDatabase, type Database } from '../server/src/db/database.ts';
import { migrateToLatest } from '../server/src/db/migrate.ts';
import { createKnowledgeIndex } from '../server/src/modules/knowledge/knowledge.index.ts';
import { createKnowledgeRepo } from '../server/src/modules/knowledge/knowledge.repo.ts';
import { createLocalEmbedder } from '../server/src/providers/embeddings/index.ts';
import { createJobQueue } from '../server/src/jobs/queue.ts';
import { benchLine } from './lib/util.ts';

const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 100_000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 200);
/** Queries over all 100 projects for the HNSW recall (each also needs an exact scan of every chunk). */
const ALL_QUERIES = Number(process.env.BENCH_ALL_QUERIES ?? 30);
/** Chunks indexed one document at a time with the HNSW index in place before the bulk phase. */
const INCREMENTAL_CHUNKS = Number(process.env.BENCH_INCREMENTAL_CHUNKS ?? 2500);
const PROJECTS = 100;
const SECTIONS = 50;
const DOCS = Math.max(PROJECTS, Math.round(CHUNKS / SECTIONS));

// Deterministic pseudo-random numbers (mulberry32).
function rng(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(42);
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
  'do',
  'gu',
  'bri',
  'fen',
  'hol',
  'jak',
  'lin',
  'mor',
  'nus',
  'pra',
  'qui',
  'ster',
  'tor',
  'vel',
];
const VOCAB = Array.from({ length: 6000 }, (_, i) => {
  const r = rng(i + 1);
  const n = 2 + Math.floor(r() * 3);
  return Array.from({ length: n }, () => SYL[Math.floor(r() * SYL.length)]).join('') + (i % 7);
});
const zipf = () => VOCAB[Math.min(VOCAB.length - 1, Math.floor(Math.exp(rand() * Math.log(VOCAB.length))) - 1)];
const sentence = (n: number) => Array.from({ length: n }, zipf).join(' ');

interface Doc {
  project: number;
  id: string;
  title: string;
  text: string;
  sections: string[];
}
function makeDocs(): Doc[] {
  const docs: Doc[] = [];
  for (let d = 0; d < DOCS; d++) {
    const sections = Array.from({ length: SECTIONS }, () => sentence(45 + Math.floor(rand() * 30)));
    const title = `Doc ${d} ${sentence(2)}`;
    const text = sections.map((s, i) => `## ${sentence(3)} ${i}\n\n${s}.`).join('\n\n');
    docs.push({ project: d % PROJECTS, id: `doc-${d}.md`, title, text, sections });
  }
  return docs;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

interface Row {
  database: string;
  vector: string;
  chunks: number;
  rate: number;
  incRate: number;
  buildSeconds: number;
  p50: number;
  p95: number;
  recallProject: number;
  recallAll: number;
  note: string;
}

async function runOn(label: string, database: Database, docs: Doc[]): Promise<Row> {
  await migrateToLatest(database.db);
  const quiet = { warn() {}, info() {}, error() {} };
  const index = createKnowledgeIndex({
    repo: createKnowledgeRepo(database.db),
    database,
    embedder: createLocalEmbedder(),
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
  const projectIds: number[] = [];
  for (let p = 0; p < PROJECTS; p++) {
    const r = await database.db
      .insertInto('projects')
      .values({ owner_id: user.id, name: `bench-${p}`, display_name: `Bench ${p}` })
      .returning('id')
      .executeTakeFirstOrThrow();
    projectIds.push(r.id);
  }
  // Indexing: 4 documents in flight (the embedded database serialises them; a server runs them in parallel).
  // Phase 1, the app's path: documents indexed one by one into a table that has its HNSW index.
  // Phase 2, bulk: the HNSW index is dropped, the rest is loaded, and the index is built again (timed).
  const incremental = Math.min(docs.length, Math.max(1, Math.round(INCREMENTAL_CHUNKS / SECTIONS)));
  let t0 = performance.now();
  let next = 0;
  let stopAt = incremental;
  let lastReport = t0;
  const worker = async () => {
    while (next < stopAt) {
      const d = docs[next++];
      await index.indexLoaded(
        { project_id: projectIds[d.project], doc_type: 'wiki', doc_id: d.id },
        { title: d.title, text: d.text, scope: 'project' },
      );
      if (performance.now() - lastReport > 15000) {
        lastReport = performance.now();
        process.stderr.write(`  ${label}: ${next}/${docs.length} documents…\n`);
      }
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  const incRate = (incremental * SECTIONS) / ((performance.now() - t0) / 1000);
  t0 = performance.now();
  if (database.vector) await database.executeSql('drop index if exists knowledge_chunks_hnsw_256');
  stopAt = docs.length;
  await Promise.all([worker(), worker(), worker(), worker()]);
  const loadSeconds = (performance.now() - t0) / 1000;
  process.stderr.write(
    `  ${label}: loaded ${docs.length} documents in ${((performance.now() - t0) / 1000).toFixed(0)} s; building the vector index…\n`,
  );
  const b0 = performance.now();
  await createKnowledgeIndex({
    repo: createKnowledgeRepo(database.db),
    database,
    embedder: createLocalEmbedder(),
    loaders: {},
    jobs: createJobQueue(database, quiet),
    log: quiet,
  }).start();
  const buildSeconds = (performance.now() - b0) / 1000;
  const seconds = loadSeconds + buildSeconds;
  const count = await database.db
    .selectFrom('knowledge_chunks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const chunks = Number(count.n);
  await database.executeSql('analyze knowledge_chunks');
  process.stderr.write(`  ${label}: index built in ${buildSeconds.toFixed(0)} s; querying…\n`);

  const qrand = rng(7);
  const lat: number[] = [];
  let hitP = 0;
  let hitA = 0;
  let total = 0;
  for (let i = 0; i < QUERIES; i++) {
    const d = docs[Math.floor(qrand() * docs.length)];
    const words = d.sections[Math.floor(qrand() * SECTIONS)].split(' ');
    const start = Math.floor(qrand() * Math.max(1, words.length - 6));
    const q = words.slice(start, start + 4 + Math.floor(qrand() * 4)).join(' ');
    const input = { q, k: 6, projectIds: [projectIds[d.project]], includeGlobal: true };
    const s0 = performance.now();
    await index.search(input);
    lat.push(performance.now() - s0);
    const [approx, exact] = [
      await index.vectorSearch(input, { exact: false }),
      await index.vectorSearch(input, { exact: true }),
    ];
    const ex = new Set(exact.map((r) => r.id));
    hitP += approx.filter((r) => ex.has(r.id)).length;
    // Over all projects the HNSW index does the work; without pgvector both sides are the same exact scan (skipped).
    if (database.vector && i < Math.min(QUERIES, ALL_QUERIES)) {
      const all = { ...input, projectIds };
      const [a2, e2] = [
        await index.vectorSearch(all, { exact: false }),
        await index.vectorSearch(all, { exact: true }),
      ];
      const ex2 = new Set(e2.map((r) => r.id));
      hitA += a2.filter((r) => ex2.has(r.id)).length;
      total += e2.length;
    }
  }
  return {
    database: label,
    vector: index.mode,
    chunks,
    rate: ((docs.length - incremental) * SECTIONS) / seconds,
    incRate,
    buildSeconds,
    p50: pct(lat, 50),
    p95: pct(lat, 95),
    recallProject: hitP / (QUERIES * 6),
    recallAll: total ? hitA / total : 1,
    note:
      index.mode === 'exact-scan'
        ? 'no pgvector: the scan is exact (recall 1 by construction)'
        : 'project searches (≤ 20,000 candidates) scan exactly with pgvector; all-projects searches use HNSW (m 16, ef_construction 64, ef_search 200, iterative scan)',
  };
}

async function main() {
  process.stderr.write(`generating ${DOCS} documents × ${SECTIONS} sections across ${PROJECTS} projects…\n`);
  const docs = makeDocs();
  const rows: Row[] = [];
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rag-bench-'));
  try {
    process.stderr.write('embedded database (PGlite + pgvector, in memory)…\n');
    const embedded = await openDatabase({ url: 'memory://', dataDir: tmp });
    try {
      rows.push(await runOn('embedded (PGlite)', embedded, docs));
    } finally {
      await embedded.close();
    }
    const url = process.env.DATABASE_URL;
    if (url && /^postgres/.test(url)) {
      const name = `rag_bench_${process.pid}`;
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(`create database ${name}`);
      try {
        const u = new URL(url);
        u.pathname = `/${name}`;
        process.stderr.write(`PostgreSQL (${u.host}, database ${name})…\n`);
        const server = await openDatabase({ url: u.toString(), dataDir: tmp, poolSize: 8 });
        try {
          rows.push(await runOn('PostgreSQL server', server, docs));
        } finally {
          await server.close();
        }
      } finally {
        await admin.query(`drop database if exists ${name} with (force)`);
        await admin.end();
      }
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const f = (n: number, d = 1) => n.toFixed(d);
  const lines = [
    `| database | vector search | chunks | indexing, per document with HNSW (chunks/s) | indexing, bulk + index build (chunks/s; build s) | search p50 (ms) | search p95 (ms) | recall@6 project | recall@6 all projects | note |`,
    `|---|---|---|---|---|---|---|---|---|---|`,
    ...rows.map(
      (r) =>
        `| ${r.database} | ${r.vector} | ${r.chunks} | ${f(r.incRate, 0)} | ${f(r.rate, 0)}; ${f(r.buildSeconds)} | ${f(r.p50)} | ${f(r.p95)} | ${f(r.recallProject, 3)} | ${f(r.recallAll, 3)} | ${r.note} |`,
    ),
  ];
  for (const r of rows)
    benchLine(`rag (${r.database})`, {
      search_p50_ms: +f(r.p50),
      search_p95_ms: +f(r.p95),
      recall_project: +f(r.recallProject, 3),
      recall_all: +f(r.recallAll, 3),
      index_chunks_per_s: Math.round(r.incRate),
      baseline: 'recall against an exact scan of the same candidates',
    });
  process.stdout.write(
    `\nRAG benchmark: ${QUERIES} queries, k = 6, local embedder (256 dimensions)\n\n${lines.join('\n')}\n`,
  );
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
