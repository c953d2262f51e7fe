/**
 * The shared semantic index (specification, Memory and knowledge, RAG hit; issue 5).
 *
 * Storage: `knowledge_documents` (one row per indexed document: key `(project_id, doc_type, doc_id)`,
 * content hash, embedder id and dimension) and `knowledge_chunks` (text, heading path, `real[]` vector,
 * tsvector). Two search channels, fused by reciprocal rank fusion (k = 60):
 *  - vectors: on pgvector (always on PGlite; on a server where the extension exists) an exact scan with
 *    pgvector's `<=>` when the caller's candidates are at most `EXACT_MAX_CANDIDATES` chunks (a project and
 *    the global documents, usually), else an HNSW index over
 *    `(embedding::vector(D)) vector_cosine_ops WHERE dims = D`, created at start for the configured
 *    dimension D, queried with ef_search = max(200, 10 × candidates) and iterative scans (`hnsw.iterative_scan = strict_order`) so project filters
 *    keep enough candidates; elsewhere an exact scan computing `1 − Σ a·b` in SQL over the caller's
 *    candidate set (its projects plus global documents), which is exact because every vector is L2-normalised;
 *  - words: PostgreSQL full-text search (`english` configuration, title weight A, text B; GIN index),
 *    any of the query's words.
 * Only chunks of the configured embedder id and dimension are searched, so spaces never mix; at start,
 * documents embedded by another embedder are marked stale and re-index jobs are queued.
 *
 * Indexing is a durable job (`knowledge.index`): load the current text from the owner's loader
 * (`deps.loaders`), skip when the content hash and embedder are unchanged, embed outside any
 * transaction, then replace the document's chunks in one transaction. A missing document removes its
 * chunks. Re-running a job is harmless; pg-boss retries a job interrupted by a restart.
 */
import crypto from 'node:crypto';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { Database } from '../../db/database.ts';
import type { Embedder } from '../../providers/embeddings/index.ts';
import { EmbeddingsError } from '../../providers/embeddings/index.ts';
import type { DocLoaders, DocType, IndexJob } from '../../lib/doc-sources.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { Upstream } from '../../http/errors.ts';
import { chunkDocument } from './chunking.ts';

/** One search hit (specification, RAG hit) plus the chunk's title and text. */
export interface Hit {
  rank: number;
  doc_type: string;
  doc_id: string;
  chunk_ix: number;
  /** Cosine distance between the query and the chunk (0 identical … 2 opposite). */
  distance: number;
  scope: 'project' | 'global';
  project_id: number | null;
  title: string;
  text: string;
  /** True when the chunk also matched the query's words (full-text channel). */
  keyword_match: boolean;
}

export interface SearchInput {
  q: string;
  /** Number of hits, 1–25. */
  k: number;
  /** Projects whose documents are searched. */
  projectIds: number[];
  /** Also search global documents (global skills, public docs). */
  includeGlobal: boolean;
  /** Restrict to these document types; undefined: all. */
  docTypes?: string[];
}

export type IndexOutcome = 'indexed' | 'unchanged' | 'removed' | 'no_loader';

export interface KnowledgeIndex {
  /** `pgvector-hnsw` or `exact-scan`, chosen from `database.vector`. */
  readonly mode: 'pgvector-hnsw' | 'exact-scan';
  /**
   * Start-time step: learn the embedder's dimension, create the HNSW index for it (pgvector), and queue
   * re-indexing of documents embedded by another embedder or dimension. @returns how many were queued.
   * @throws EmbeddingsError when a remote embedder cannot be reached (the caller logs and retries later).
   */
  start(): Promise<{ requeued: number }>;
  /** Run one index job now (the job handler). @throws on embedder or database failure (the job is retried). */
  indexDocument(job: IndexJob): Promise<IndexOutcome>;
  /** Index already-loaded documents directly (benchmark, bulk tools); same storage path as the job. */
  indexLoaded(job: IndexJob, doc: { title: string; text: string; scope: 'project' | 'global' }): Promise<IndexOutcome>;
  /**
   * Hybrid search. @returns at most `k` hits, best first, ranks 1..n.
   * @throws Upstream 503 `embeddings_unavailable` when the embedder fails.
   */
  search(input: SearchInput): Promise<Hit[]>;
  /** Exact nearest neighbours by vector only (benchmark reference). */
  vectorSearch(input: SearchInput, opts: { exact: boolean }): Promise<Array<{ id: number; distance: number }>>;
  /** Documents of one type in a project (or global with null), as `doc_id`s. */
  documentIds(projectId: number | null, docType: DocType): Promise<string[]>;
}

const RRF_K = 60;
/** Up to this many candidate chunks the vector channel scans exactly even where an HNSW index exists. */
export const EXACT_MAX_CANDIDATES = 20_000;
const INSERT_BATCH = 100;

const vecLiteral = (v: number[]) => `[${v.map((x) => (x === 0 ? '0' : x.toPrecision(7))).join(',')}]`;
const arrLiteral = (v: number[]) => `{${v.map((x) => (x === 0 ? '0' : x.toPrecision(7))).join(',')}}`;

/** Words of a query for the full-text channel (letters/digits only, so safe inside a tsquery). */
export function queryWords(q: string, max = 24): string[] {
  const seen = new Set<string>();
  for (const w of q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (w.length < 2 && !/\d/.test(w)) continue;
    seen.add(w);
    if (seen.size >= max) break;
  }
  return [...seen];
}

export function createKnowledgeIndex(deps: {
  db: Kysely<DB>;
  database: Pick<Database, 'vector' | 'kind'>;
  embedder: Embedder;
  /** The owners' loaders, by document type. */
  loaders: DocLoaders;
  jobs: JobQueue;
  log: { warn(o: object, m: string): void; info?(o: object, m: string): void };
}): KnowledgeIndex {
  const { embedder } = deps;
  const db = () => deps.db;
  const mode = deps.database.vector ? 'pgvector-hnsw' : 'exact-scan';
  const indexed = new Set<number>();

  const ensureVectorIndex = async (dims: number) => {
    if (!deps.database.vector || indexed.has(dims)) return;
    const d = sql.lit(dims);
    // Enough build memory for the graph of ~100k vectors to stay in memory (pgvector builds much slower on disk).
    await db()
      .transaction()
      .execute(async (tx) => {
        await sql`set local maintenance_work_mem = '512MB'`.execute(tx);
        await sql`create index if not exists ${sql.id(`knowledge_chunks_hnsw_${dims}`)} on knowledge_chunks using hnsw ((embedding::vector(${d})) vector_cosine_ops) where dims = ${d}`.execute(
          tx,
        );
      });
    indexed.add(dims);
  };

  const dimsNow = async () => {
    const dims = await embedder.probe();
    await ensureVectorIndex(dims);
    return dims;
  };

  const store = async (
    job: IndexJob,
    doc: { title: string; text: string; scope: 'project' | 'global' },
  ): Promise<IndexOutcome> => {
    const dims = await dimsNow();
    const hash = crypto.createHash('sha256').update(`${doc.scope}\n${doc.title}\n${doc.text}`).digest('hex');
    const existing = await db()
      .selectFrom('knowledge_documents')
      .select(['id', 'content_hash', 'embedder', 'dims'])
      .where(sql<boolean>`coalesce(project_id, 0) = ${job.project_id ?? 0}`)
      .where('doc_type', '=', job.doc_type)
      .where('doc_id', '=', job.doc_id)
      .executeTakeFirst();
    if (existing && existing.content_hash === hash && existing.embedder === embedder.id && existing.dims === dims)
      return 'unchanged';
    const chunks = chunkDocument(doc.title, doc.text);
    const vectors = chunks.length ? await embedder.embed(chunks.map((c) => `${c.title}\n${c.text}`)) : [];
    await db()
      .transaction()
      .execute(async (tx) => {
        await sql`select pg_advisory_xact_lock(hashtext(${`knowledge:${job.project_id ?? 0}:${job.doc_type}:${job.doc_id}`}))`.execute(
          tx,
        );
        const row = await sql<{ id: number }>`
          insert into knowledge_documents (project_id, doc_type, doc_id, scope, title, content_hash, embedder, dims, chunk_count, indexed_at)
          values (${job.project_id}, ${job.doc_type}, ${job.doc_id}, ${doc.scope}, ${doc.title}, ${hash}, ${embedder.id}, ${dims}, ${chunks.length}, now())
          on conflict ((coalesce(project_id, 0)), doc_type, doc_id) do update set
            scope = excluded.scope, title = excluded.title, content_hash = excluded.content_hash, embedder = excluded.embedder,
            dims = excluded.dims, chunk_count = excluded.chunk_count, indexed_at = excluded.indexed_at
          returning id`.execute(tx);
        const documentId = row.rows[0].id;
        await tx.deleteFrom('knowledge_chunks').where('document_id', '=', documentId).execute();
        for (let i = 0; i < chunks.length; i += INSERT_BATCH) {
          await tx
            .insertInto('knowledge_chunks')
            .values(
              chunks.slice(i, i + INSERT_BATCH).map((c, j) => ({
                document_id: documentId,
                project_id: job.project_id,
                doc_type: job.doc_type,
                doc_id: job.doc_id,
                scope: doc.scope,
                chunk_ix: c.chunk_ix,
                title: c.title,
                text: c.text,
                embedder: embedder.id,
                dims,
                embedding: sql`${arrLiteral(vectors[i + j])}::real[]`,
              })),
            )
            .execute();
        }
      });
    return 'indexed';
  };

  const remove = async (job: IndexJob) => {
    const r = await db()
      .deleteFrom('knowledge_documents')
      .where(sql<boolean>`coalesce(project_id, 0) = ${job.project_id ?? 0}`)
      .where('doc_type', '=', job.doc_type)
      .where('doc_id', '=', job.doc_id)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  };

  const scopeFilter = (input: SearchInput): RawBuilder<boolean> => {
    const parts: RawBuilder<unknown>[] = [];
    if (input.projectIds.length) parts.push(sql`c.project_id in (${sql.join(input.projectIds)})`);
    if (input.includeGlobal) parts.push(sql`c.scope = 'global'`);
    const scope = parts.length ? sql`(${sql.join(parts, sql` or `)})` : sql`false`;
    const types = input.docTypes?.length ? sql` and c.doc_type in (${sql.join(input.docTypes)})` : sql``;
    return sql<boolean>`${scope}${types}`;
  };

  type Row = {
    id: number;
    project_id: number | null;
    doc_type: string;
    doc_id: string;
    chunk_ix: number;
    scope: 'project' | 'global';
    title: string;
    text: string;
    distance: number;
  };
  const cols = sql`c.id, c.project_id, c.doc_type, c.doc_id, c.chunk_ix, c.scope, c.title, c.text`;

  const distanceExpr = (qv: number[], dims: number, exact: boolean) =>
    deps.database.vector && !exact
      ? sql`((c.embedding::vector(${sql.lit(dims)})) <=> ${vecLiteral(qv)}::vector(${sql.lit(dims)}))`
      : sql`(1 - (select sum(a::float8 * b::float8) from unnest(c.embedding, ${arrLiteral(qv)}::real[]) as t(a, b)))`;

  const vectorChannel = async (
    input: SearchInput,
    qv: number[],
    dims: number,
    limit: number,
    exact = false,
  ): Promise<Row[]> => {
    const dist = distanceExpr(qv, dims, exact);
    const q = sql<Row>`
      select ${cols}, ${dist} as distance
      from knowledge_chunks c
      where c.dims = ${sql.lit(dims)} and c.embedder = ${embedder.id} and ${scopeFilter(input)}
      order by ${dist}
      limit ${limit}`;
    if (!deps.database.vector) return (await q.execute(db())).rows;
    // A small candidate set (a project and the global documents, typically) is scanned exactly: it is cheap with
    // pgvector's distance in C and avoids the recall loss of a filtered graph search. Large sets use HNSW.
    let scan = exact;
    if (!scan) {
      const n = await sql<{ n: number }>`
        select count(*)::int as n from (select 1 from knowledge_chunks c
          where c.dims = ${sql.lit(dims)} and c.embedder = ${embedder.id} and ${scopeFilter(input)} limit ${EXACT_MAX_CANDIDATES + 1}) x`.execute(
        db(),
      );
      scan = n.rows[0].n <= EXACT_MAX_CANDIDATES;
    }
    return db()
      .transaction()
      .execute(async (tx) => {
        if (scan) {
          await sql`set local enable_indexscan = off`.execute(tx);
        } else {
          await sql`set local hnsw.ef_search = ${sql.lit(Math.min(1000, Math.max(200, limit * 10)))}`.execute(tx);
          await sql`set local hnsw.iterative_scan = strict_order`.execute(tx);
        }
        return (await q.execute(tx)).rows;
      });
  };

  const textChannel = async (input: SearchInput, qv: number[] | null, dims: number, limit: number): Promise<Row[]> => {
    const words = queryWords(input.q);
    if (!words.length) return [];
    const tsq = words.map((w) => `'${w}'`).join(' | ');
    const dist = qv ? distanceExpr(qv, dims, false) : sql`1::float8`;
    const r = await sql<Row>`
      select ${cols}, ${dist} as distance
      from knowledge_chunks c, to_tsquery('english', ${tsq}) as query
      where c.tsv @@ query and c.dims = ${sql.lit(dims)} and c.embedder = ${embedder.id} and ${scopeFilter(input)}
      order by ts_rank_cd(c.tsv, query) desc, c.id
      limit ${limit}`.execute(db());
    return r.rows;
  };

  const embedQuery = async (q: string): Promise<{ qv: number[] | null; dims: number }> => {
    try {
      const dims = await dimsNow();
      const [qv] = await embedder.embed([q]);
      return { qv: qv.some((x) => x !== 0) ? qv : null, dims };
    } catch (err) {
      if (err instanceof EmbeddingsError)
        throw new Upstream(503, 'embeddings_unavailable', 'The embeddings service is not available; try again later.');
      throw err;
    }
  };

  return {
    mode,
    async start() {
      const dims = await dimsNow();
      const stale = await db()
        .selectFrom('knowledge_documents')
        .select(['id', 'project_id', 'doc_type', 'doc_id'])
        .where((eb) =>
          eb.or([
            eb('embedder', 'is', null),
            eb('embedder', '!=', embedder.id),
            eb('dims', 'is', null),
            eb('dims', '!=', dims),
          ]),
        )
        .execute();
      if (!stale.length) return { requeued: 0 };
      await db()
        .updateTable('knowledge_documents')
        .set({ content_hash: null })
        .where(
          'id',
          'in',
          stale.map((s) => s.id),
        )
        .execute();
      for (const s of stale) {
        await deps.jobs.send('knowledge.index', {
          project_id: s.project_id,
          doc_type: s.doc_type as DocType,
          doc_id: s.doc_id,
        } satisfies IndexJob);
      }
      deps.log.info?.(
        { requeued: stale.length, embedder: embedder.id, dims },
        'embedder changed: documents queued for re-indexing',
      );
      return { requeued: stale.length };
    },
    async indexDocument(job) {
      const loader = deps.loaders[job.doc_type];
      if (!loader) {
        deps.log.warn({ doc_type: job.doc_type }, 'no document loader registered; index job skipped');
        return 'no_loader';
      }
      const doc = await loader(job.project_id, job.doc_id);
      if (!doc) {
        await remove(job);
        return 'removed';
      }
      return store(job, doc);
    },
    indexLoaded: store,
    async search(input) {
      const { qv, dims } = await embedQuery(input.q);
      const pool = Math.max(input.k * 4, 24);
      const [vec, txt] = await Promise.all([
        qv ? vectorChannel(input, qv, dims, pool) : Promise.resolve([]),
        textChannel(input, qv, dims, pool),
      ]);
      const fused = new Map<number, { row: Row; score: number; keyword: boolean }>();
      for (const [i, row] of vec.entries()) fused.set(row.id, { row, score: 1 / (RRF_K + i + 1), keyword: false });
      txt.forEach((row, i) => {
        const cur = fused.get(row.id);
        if (cur) {
          cur.score += 1 / (RRF_K + i + 1);
          cur.keyword = true;
        } else fused.set(row.id, { row, score: 1 / (RRF_K + i + 1), keyword: true });
      });
      return [...fused.values()]
        .sort((a, b) => b.score - a.score || Number(a.row.distance) - Number(b.row.distance))
        .slice(0, input.k)
        .map(({ row, keyword }, i) => ({
          rank: i + 1,
          doc_type: row.doc_type,
          doc_id: row.doc_id,
          chunk_ix: row.chunk_ix,
          distance: Number.isFinite(Number(row.distance)) ? Number(row.distance) : 1,
          scope: row.scope,
          project_id: row.project_id,
          title: row.title,
          text: row.text,
          keyword_match: keyword,
        }));
    },
    async vectorSearch(input, opts) {
      const { qv, dims } = await embedQuery(input.q);
      if (!qv) return [];
      const rows = await vectorChannel(input, qv, dims, input.k, opts.exact);
      return rows.map((r) => ({ id: Number(r.id), distance: Number(r.distance) }));
    },
    async documentIds(projectId, docType) {
      const rows = await db()
        .selectFrom('knowledge_documents')
        .select('doc_id')
        .where(sql<boolean>`coalesce(project_id, 0) = ${projectId ?? 0}`)
        .where('doc_type', '=', docType)
        .execute();
      return rows.map((r) => r.doc_id);
    },
  };
}
