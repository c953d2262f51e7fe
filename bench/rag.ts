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
 * `BENCH_CHUNKS` (default 100000) and `BENCH_QUERIES` (default 200) scale it down for a quick look;
 * `BENCH_EMBEDDED=0` runs only the PostgreSQL server.
 *
 * `BENCH_ONE_PROJECT=1` (issue 31): every chunk in one project (e.g. `BENCH_CHUNKS=1000000`), so a project-scoped
 * search has more candidates than the exact-scan threshold and goes through the HNSW index with the project filter
 * (iterative scan). The embedded database is then on disk (a temporary DATA_DIR, as the service runs it;
 * `BENCH_MEMORY=1` keeps it in memory). Recall@6 is against pgvector's exact distance over every chunk of the project
 * (a sequential scan per query: `BENCH_RECALL_QUERIES`, default 50, of the queries are checked). The table also
 * gives the vector channel's own latency. Documents are generated one at a time from their number (the 1M-chunk
 * text is never all in memory); loading is the same path as above (`indexLoaded`, the HNSW index dropped during the
 * bulk phase and built after it).
 *
 * `BENCH_CORPUS` (issue 31): `zipf` (default, the corpus above) or `topics` (each document about one of `BENCH_TOPICS`
 * subjects, default one per 20 documents, its words 60 % from the topic's own vocabulary: bench/lib/rag-corpus.ts).
 * Beside recall@6 the table gives the "source found" rate: the chunk the query was taken from is among the 6 answered
 * by the hybrid search, by the vector channel, and by the exact vector top 6. The exact top-6 similarities of the
 * first `BENCH_SHOW` (default 5) queries are printed. Load and build also give this process's CPU seconds (the
 * embedded database runs in it), which say more than wall time on a loaded machine.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../server/src/db/database.ts';
import { migrateToLatest } from '../server/src/db/migrate.ts';
import { createKnowledgeIndex, HNSW_MAX_SCAN_TUPLES } from '../server/src/modules/knowledge/knowledge.index.ts';
import { createKnowledgeRepo } from '../server/src/modules/knowledge/knowledge.repo.ts';
import { createLocalEmbedder } from '../server/src/providers/embeddings/index.ts';
import { createJobQueue } from '../server/src/jobs/queue.ts';
import { benchLine } from './lib/util.ts';
import { corpus, rng, type CorpusKind, type Doc } from './lib/rag-corpus.ts';

const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 100_000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 200);
/** Queries over all 100 projects for the HNSW recall (each also needs an exact scan of every chunk). */
const ALL_QUERIES = Number(process.env.BENCH_ALL_QUERIES ?? 30);
/** Chunks indexed one document at a time with the HNSW index in place before the bulk phase. */
const INCREMENTAL_CHUNKS = Number(process.env.BENCH_INCREMENTAL_CHUNKS ?? 2500);
const ONE_PROJECT = process.env.BENCH_ONE_PROJECT === '1';
const RECALL_QUERIES = Number(process.env.BENCH_RECALL_QUERIES ?? (ONE_PROJECT ? 50 : QUERIES));
const PROJECTS = ONE_PROJECT ? 1 : 100;
/** ef_search values tried on the recall queries in the one-project mode. */
const EF_SWEEP = (process.env.BENCH_EF ?? '40,100,200,400,800').split(',').map(Number);
const SECTIONS = 50;
const DOCS = Math.max(PROJECTS, Math.round(CHUNKS / SECTIONS));

const CORPUS = (process.env.BENCH_CORPUS ?? 'zipf') as CorpusKind;
/** Topics of the `topics` corpus: one per 20 documents by default (100 at 100,000 chunks). */
const TOPICS = Number(process.env.BENCH_TOPICS ?? Math.max(10, Math.round(DOCS / 20)));
/**
 * Distance slack of the tie-counting recall: ann-benchmarks' k-nn recall counts an answer as found when its distance
 * is at most the exact k-th distance plus 1e-3, so that an index is not scored on which of equally distant
 * neighbours it returns (the local embedder's corpora have many; see bench/README.md, "RAG").
 */
const TIE_EPSILON = 1e-3;

/** The largest distance that counts as found for one query: the exact 6th (or last) distance + `TIE_EPSILON`. */
function tieThreshold(exact: { distance: number | string }[]): number {
  return exact.length ? Number(exact[exact.length - 1].distance) + TIE_EPSILON : -Infinity;
}

/** Queries whose exact top-6 similarities are printed (the near-ties of the corpus). */
const SHOW = Number(process.env.BENCH_SHOW ?? 5);

/** The documents, made when read. */
interface Docs {
  length: number;
  at(d: number): Doc;
}

/** CPU seconds (user + system) this process used so far: on a loaded machine, wall time says little. */
const cpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

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
  /** CPU seconds of this process (the embedded database runs in it) for the bulk load and the index build. */
  loadCpu: number;
  buildCpu: number;
  p50: number;
  p95: number;
  vecP50: number;
  vecP95: number;
  cpuP50: number;
  cpuP95: number;
  recallProject: number;
  /** recall@6 with ties counted: answers no farther than the exact 6th distance + `TIE_EPSILON`. */
  recallTies: number;
  recallAll: number;
  /** Share of the queries whose source chunk is in the top 6: hybrid search, vector channel, exact vector top 6. */
  foundSearch: number;
  foundVector: number;
  foundExact: number;
  note: string;
}

async function runOn(label: string, database: Database, docs: Docs): Promise<Row> {
  await migrateToLatest(database.db);
  const quiet = { warn() {}, info() {}, error() {} };
  const repo = createKnowledgeRepo(database.db);
  const index = createKnowledgeIndex({
    repo,
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
      const d = docs.at(next++);
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
  const c0 = cpuSeconds();
  if (database.vector) await database.executeSql('drop index if exists knowledge_chunks_hnsw_256');
  // One project: the full-text index is dropped too during the bulk phase and built again with the vector index
  // (the build time below includes it); the rows are the same as the app writes.
  if (ONE_PROJECT) await database.executeSql('drop index if exists knowledge_chunks_tsv');
  stopAt = docs.length;
  await Promise.all([worker(), worker(), worker(), worker()]);
  const loadSeconds = (performance.now() - t0) / 1000;
  const loadCpu = cpuSeconds() - c0;
  process.stderr.write(
    `  ${label}: loaded ${docs.length} documents in ${((performance.now() - t0) / 1000).toFixed(0)} s; building the vector index…\n`,
  );
  const b0 = performance.now();
  const bc0 = cpuSeconds();
  if (ONE_PROJECT) {
    await database.executeSql(`set maintenance_work_mem = '512MB'`);
    await database.executeSql('create index if not exists knowledge_chunks_tsv on knowledge_chunks using gin (tsv)');
    process.stderr.write(`  ${label}: full-text index built in ${((performance.now() - b0) / 1000).toFixed(0)} s\n`);
  }
  await createKnowledgeIndex({
    repo: createKnowledgeRepo(database.db),
    database,
    embedder: createLocalEmbedder(),
    loaders: {},
    jobs: createJobQueue(database, quiet),
    log: quiet,
  }).start();
  const buildSeconds = (performance.now() - b0) / 1000;
  const buildCpu = cpuSeconds() - bc0;
  process.stderr.write(
    `  ${label}: bulk load ${loadSeconds.toFixed(0)} s (this process's CPU ${loadCpu.toFixed(0)} s), indexes built in ${buildSeconds.toFixed(0)} s (CPU ${buildCpu.toFixed(0)} s)\n`,
  );
  const seconds = loadSeconds + buildSeconds;
  const count = await database.db
    .selectFrom('knowledge_chunks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const chunks = Number(count.n);
  await database.executeSql('analyze knowledge_chunks');
  process.stderr.write(`  ${label}: index built in ${buildSeconds.toFixed(0)} s; querying…\n`);

  const embedder = createLocalEmbedder();
  const sweep = new Map<number, { hits: number; ties: number; found: number; lat: number[] }>();
  const qrand = rng(7);
  const lat: number[] = [];
  const vecLat: number[] = [];
  /** CPU milliseconds of this process per search (embedded: the database's work included). */
  const cpuLat: number[] = [];
  let hitP = 0;
  /** Answers within `TIE_EPSILON` of the exact 6th distance (ann-benchmarks' k-nn recall: a tie counts as found). */
  let tieP = 0;
  let hitA = 0;
  let total = 0;
  let checked = 0;
  // Source found: the chunk the query was taken from is among the 6 answered (hybrid search, the vector channel as
  // the app runs it, the exact top 6). A second measure beside recall@6, not a replacement of it.
  const found = { search: 0, vector: 0, exact: 0 };
  for (let i = 0; i < QUERIES; i++) {
    const d = docs.at(Math.floor(qrand() * docs.length));
    const words = d.sections[Math.floor(qrand() * SECTIONS)].split(' ');
    const start = Math.floor(qrand() * Math.max(1, words.length - 6));
    const q = words.slice(start, start + 4 + Math.floor(qrand() * 4)).join(' ');
    const input = { q, k: 6, projectIds: [projectIds[d.project]], includeGlobal: true };
    const src = await sql<{ id: number }>`
      select id from knowledge_chunks where project_id = ${projectIds[d.project]} and doc_id = ${d.id}
        and strpos(text, ${q}) > 0 limit 1`.execute(database.db);
    const srcId = Number(src.rows[0]?.id ?? -1);
    const s0 = performance.now();
    const sc0 = cpuSeconds();
    const hits = await index.search(input);
    lat.push(performance.now() - s0);
    cpuLat.push((cpuSeconds() - sc0) * 1000);
    if (hits.some((h) => h.chunk_id === srcId)) found.search++;
    const v0 = performance.now();
    const approx = await index.vectorSearch(input, { exact: false });
    vecLat.push(performance.now() - v0);
    if (approx.some((r) => r.id === srcId)) found.vector++;
    if (i < RECALL_QUERIES) {
      const exact = await index.vectorSearch(input, { exact: true });
      const ex = new Set(exact.map((r) => r.id));
      if (ex.has(srcId)) found.exact++;
      if (i < SHOW)
        process.stderr.write(
          `  ${label}: query "${q}": exact top 6 similarities ${exact.map((r) => (1 - r.distance).toFixed(3)).join(' ')}; source chunk ${ex.has(srcId) ? 'among them' : 'not among them'}; the app's vector channel found ${approx.filter((r) => ex.has(r.id)).length} of them\n`,
        );
      hitP += approx.filter((r) => ex.has(r.id)).length;
      const threshold = tieThreshold(exact);
      tieP += approx.filter((r) => Number(r.distance) <= threshold).length;
      checked++;
      // ef_search sweep: the same filtered HNSW query the index runs, through the repository, k = 6.
      if (ONE_PROJECT && database.vector) {
        const [qv] = await embedder.embed([q]);
        const scope = { projectIds: input.projectIds, includeGlobal: true, embedder: embedder.id, dims: qv.length };
        for (const ef of EF_SWEEP) {
          const e0 = performance.now();
          const rows = await repo.nearest(scope, qv, 6, 'pgvector', {
            kind: 'hnsw',
            efSearch: ef,
            maxScanTuples: HNSW_MAX_SCAN_TUPLES,
          });
          const cur = sweep.get(ef) ?? { hits: 0, ties: 0, found: 0, lat: [] };
          cur.lat.push(performance.now() - e0);
          cur.hits += rows.filter((r) => ex.has(Number(r.id))).length;
          cur.ties += rows.filter((r) => Number(r.distance) <= threshold).length;
          if (rows.some((r) => Number(r.id) === srcId)) cur.found++;
          sweep.set(ef, cur);
        }
      }
    }
    if (ONE_PROJECT && performance.now() - lastReport > 15000) {
      lastReport = performance.now();
      process.stderr.write(`  ${label}: ${i + 1}/${QUERIES} queries…\n`);
    }
    // Over all projects the HNSW index does the work; without pgvector both sides are the same exact scan (skipped).
    if (!ONE_PROJECT && database.vector && i < Math.min(QUERIES, ALL_QUERIES)) {
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
  process.stderr.write(
    `  ${label}: search CPU of this process p50 ${pct(cpuLat, 50).toFixed(1)} ms, p95 ${pct(cpuLat, 95).toFixed(1)} ms (wall p50 ${pct(lat, 50).toFixed(1)}, p95 ${pct(lat, 95).toFixed(1)})\n`,
  );
  for (const [ef, r] of sweep)
    process.stderr.write(
      `  ${label}: ef_search ${ef}: recall@6 ${(r.hits / (checked * 6)).toFixed(3)} (ties counted ${(r.ties / (checked * 6)).toFixed(3)}), source found ${(r.found / checked).toFixed(3)}, p50 ${pct(r.lat, 50).toFixed(1)} ms, p95 ${pct(r.lat, 95).toFixed(1)} ms\n`,
    );
  return {
    database: label,
    vector: index.mode,
    chunks,
    rate: ((docs.length - incremental) * SECTIONS) / seconds,
    incRate,
    buildSeconds,
    loadCpu,
    buildCpu,
    p50: pct(lat, 50),
    p95: pct(lat, 95),
    vecP50: pct(vecLat, 50),
    vecP95: pct(vecLat, 95),
    cpuP50: pct(cpuLat, 50),
    cpuP95: pct(cpuLat, 95),
    recallProject: hitP / (checked * 6),
    recallTies: tieP / (checked * 6),
    recallAll: total ? hitA / total : 1,
    foundSearch: found.search / QUERIES,
    foundVector: found.vector / QUERIES,
    foundExact: found.exact / checked,
    note:
      index.mode === 'exact-scan'
        ? 'no pgvector: the scan is exact (recall 1 by construction)'
        : ONE_PROJECT
          ? `one project of ${chunks} chunks: its searches use HNSW with the project filter (m 16, ef_construction 64, ef_search 240, iterative scan relaxed_order); recall over ${checked} queries`
          : 'project searches (≤ 20,000 candidates) scan exactly with pgvector; all-projects searches use HNSW (m 16, ef_construction 64, ef_search 200, iterative scan)',
  };
}

async function main() {
  process.stderr.write(
    `${DOCS} documents × ${SECTIONS} sections across ${PROJECTS} project(s), corpus ${CORPUS}${CORPUS === 'topics' ? ` (${TOPICS} topics)` : ''}…\n`,
  );
  const docs: Docs = corpus(CORPUS, { docs: DOCS, projects: PROJECTS, sections: SECTIONS, topics: TOPICS });
  const rows: Row[] = [];
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rag-bench-'));
  const onDisk = ONE_PROJECT && process.env.BENCH_MEMORY !== '1';
  try {
    if (process.env.BENCH_EMBEDDED !== '0') {
      process.stderr.write(`embedded database (PGlite + pgvector, ${onDisk ? `on disk in ${tmp}` : 'in memory'})…\n`);
      const embedded = await openDatabase({ url: onDisk ? undefined : 'memory://', dataDir: tmp });
      try {
        rows.push(await runOn('embedded (PGlite)', embedded, docs));
      } finally {
        await embedded.close();
      }
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
    `| database | vector search | chunks | indexing, per document with HNSW (chunks/s) | indexing, bulk + index build (chunks/s; build s) | search p50 (ms) | search p95 (ms) | vector channel p50 / p95 (ms) | recall@6 project (ties counted) | recall@6 all projects | source found: search / vector / exact | note |`,
    `|---|---|---|---|---|---|---|---|---|---|---|---|`,
    ...rows.map(
      (r) =>
        `| ${r.database} | ${r.vector} | ${r.chunks} | ${f(r.incRate, 0)} | ${f(r.rate, 0)}; ${f(r.buildSeconds)} | ${f(r.p50)} | ${f(r.p95)} | ${f(r.vecP50)} / ${f(r.vecP95)} | ${f(r.recallProject, 3)} (${f(r.recallTies, 3)}) | ${ONE_PROJECT ? '—' : f(r.recallAll, 3)} | ${f(r.foundSearch, 3)} / ${f(r.foundVector, 3)} / ${f(r.foundExact, 3)} | ${r.note} |`,
    ),
  ];
  for (const r of rows)
    benchLine(`rag${ONE_PROJECT ? ' one project' : ''} (${r.database})`, {
      chunks: r.chunks,
      search_p50_ms: +f(r.p50),
      search_p95_ms: +f(r.p95),
      vector_p95_ms: +f(r.vecP95),
      search_cpu_p50_ms: +f(r.cpuP50),
      search_cpu_p95_ms: +f(r.cpuP95),
      recall_project: +f(r.recallProject, 3),
      recall_project_ties: +f(r.recallTies, 3),
      recall_all: +f(r.recallAll, 3),
      source_found_search: +f(r.foundSearch, 3),
      source_found_vector: +f(r.foundVector, 3),
      source_found_exact: +f(r.foundExact, 3),
      corpus: CORPUS,
      index_chunks_per_s: Math.round(r.incRate),
      bulk_chunks_per_s: Math.round(r.rate),
      index_build_s: +f(r.buildSeconds),
      bulk_load_cpu_s: +f(r.loadCpu),
      index_build_cpu_s: +f(r.buildCpu),
      baseline: 'recall against an exact scan of the same candidates',
    });
  process.stdout.write(
    `\nRAG benchmark: ${QUERIES} queries, k = 6, local embedder (256 dimensions), corpus ${CORPUS}\n\n${lines.join('\n')}\n`,
  );
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
