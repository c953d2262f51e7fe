/**
 * The shared semantic index (docs/ARCHITECTURE.md, Shared semantic index, help assistant, public docs).
 *
 * Storage: `knowledge_documents` (one row per indexed document: key `(project_id, doc_type, doc_id)`,
 * content hash, embedder id and dimension) and `knowledge_chunks` (text, heading path, `real[]` vector,
 * tsvector). Two search channels, fused by reciprocal rank fusion (k = 60):
 *  - vectors: on pgvector (always on PGlite; on a server where the extension exists) an exact scan with
 *    pgvector's `<=>` when the caller's candidates are at most `EXACT_MAX_CANDIDATES` chunks (a project and
 *    the global documents, usually; told by the per-project chunk counts, `knowledge_chunk_counts`, without
 *    counting chunks), else an HNSW index over `(embedding::vector(D)) vector_cosine_ops WHERE dims = D`,
 *    created at start for the configured dimension D, queried with the scope filter, ef_search =
 *    max(200, 10 × limit) and iterative scans in relaxed order (`hnsw.iterative_scan = relaxed_order`,
 *    `hnsw.max_scan_tuples` `HNSW_MAX_SCAN_TUPLES`) so the filter of one big project keeps enough candidates;
 *    should the index still answer fewer than asked (a filter few of the visited tuples pass), the exact scan
 *    answers instead. Elsewhere an exact scan computing `1 − Σ a·b` in SQL over the caller's candidate set
 *    (its projects plus global documents), which is exact because every vector is L2-normalised;
 *  - words: PostgreSQL full-text search (`english` configuration, title weight A, text B; GIN index),
 *    any of the query's words.
 * Only chunks of the configured embedder id and dimension are searched, so spaces never mix; at start,
 * documents embedded by another embedder are marked stale and re-index jobs are queued.
 *
 * Indexing is a durable job (`knowledge.index`): load the current text from the owner's loader
 * (`deps.loaders`), skip when the content hash and embedder are unchanged, embed outside any
 * transaction, then replace the document's chunks in one transaction. A missing document removes its
 * chunks. Re-running a job is harmless; pg-boss retries a job interrupted by a restart.
 *
 * This file decides (which channel, exact scan or HNSW, fusion); the SQL is knowledge.repo.ts.
 */
import crypto from 'node:crypto';
import type { Database } from '../../db/database.ts';
import type { Embedder } from '../../providers/embeddings/index.ts';
import { EmbeddingsError } from '../../providers/embeddings/index.ts';
import type { DocLoaders, DocType, IndexJob, LoadedDocument, PassageLocation } from '../../lib/doc-sources.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { Upstream } from '../../http/errors.ts';
import { chunkText } from './knowledge.rules.ts';
import type { ChunkRow, ChunkScope, KnowledgeRepo, ScanPlan } from './knowledge.repo.ts';

/**
 * One search hit (docs/ARCHITECTURE.md, Shared semantic index, help assistant, public docs) plus the chunk's title and
 * text.
 */
export interface Hit {
  rank: number;
  doc_type: string;
  doc_id: string;
  /** The chunk's id (stable until the document is indexed again). */
  chunk_id: number;
  chunk_ix: number;
  /** Where the passage is in its document (docs/ARCHITECTURE.md, Citations and locations). */
  location: PassageLocation;
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
  /**
   * With `includeGlobal`: only global documents of these types (e.g. `PLATFORM_DOC_TYPES`, leaving out the skills
   * users published); undefined: every global document.
   */
  globalDocTypes?: string[];
  /** Restrict to these document types; undefined: all. */
  docTypes?: string[];
  /** Restrict to these document ids (with `docTypes`, e.g. one note's sources); undefined: all. */
  docIds?: string[];
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
  indexLoaded(job: IndexJob, doc: LoadedDocument): Promise<IndexOutcome>;
  /**
   * Hybrid search. @returns at most `k` hits, best first, ranks 1..n.
   * @throws Upstream 503 `embeddings_unavailable` when the embedder fails.
   */
  search(input: SearchInput): Promise<Hit[]>;
  /** Exact nearest neighbours by vector only (benchmark reference). */
  vectorSearch(input: SearchInput, opts: { exact: boolean }): Promise<Array<{ id: number; distance: number }>>;
  /** Documents of one type in a project (or global with null), as `doc_id`s. */
  documentIds(projectId: number | null, docType: DocType): Promise<string[]>;
  /**
   * How much of each indexed document of a type in a project the chunks cover (docs/ARCHITECTURE.md, Citations and
   * locations): by `doc_id`, `{indexed_chars, total_chars}`; documents not (yet) indexed are absent.
   */
  coverage(
    projectId: number,
    docType: DocType,
    docIds: string[],
  ): Promise<Map<string, { indexed_chars: number; total_chars: number }>>;
}

/** Bumped when chunking changes, so documents indexed before are chunked again (it is part of the content hash). */
const CHUNKER_VERSION = 'v2-locations';

const RRF_K = 60;
/** Up to this many candidate chunks the vector channel scans exactly even where an HNSW index exists. */
export const EXACT_MAX_CANDIDATES = 20_000;
/** At most this many index tuples an HNSW search visits while looking for rows that pass the scope filter. */
export const HNSW_MAX_SCAN_TUPLES = 50_000;

/**
 * The global documents the platform itself provides (public docs, the shipped skill catalog). A model working for a
 * project or a user reads only these of the global ones: a skill another user published stays out of its context.
 */
export const PLATFORM_DOC_TYPES = ['doc', 'catalog_skill'];

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

/**
 * The index over the storage of knowledge.repo.ts.
 * @param deps.database which vector support the database has (`vector`: pgvector present).
 */
export function createKnowledgeIndex(deps: {
  repo: KnowledgeRepo;
  database: Pick<Database, 'vector' | 'kind'>;
  embedder: Embedder;
  /** The owners' loaders, by document type. */
  loaders: DocLoaders;
  jobs: JobQueue;
  log: { warn(o: object, m: string): void; info?(o: object, m: string): void };
}): KnowledgeIndex {
  const { embedder, repo } = deps;
  const mode = deps.database.vector ? 'pgvector-hnsw' : 'exact-scan';
  const indexed = new Set<number>();

  const ensureVectorIndex = async (dims: number) => {
    if (!deps.database.vector || indexed.has(dims)) return;
    await repo.createVectorIndex(dims);
    indexed.add(dims);
  };

  const dimsNow = async () => {
    const dims = await embedder.probe();
    await ensureVectorIndex(dims);
    return dims;
  };

  const store = async (job: IndexJob, doc: LoadedDocument): Promise<IndexOutcome> => {
    const dims = await dimsNow();
    const hash = crypto
      .createHash('sha256')
      .update(
        `${CHUNKER_VERSION}\n${doc.scope}\n${doc.title}\n${doc.fullChars ?? ''}\n${JSON.stringify(doc.marks ?? [])}\n${doc.text}`,
      )
      .digest('hex');
    const existing = await repo.documentState(job);
    if (existing && existing.content_hash === hash && existing.embedder === embedder.id && existing.dims === dims)
      return 'unchanged';
    const { chunks, indexedChars } = chunkText(doc.title, doc.text, { marks: doc.marks });
    const vectors = chunks.length ? await embedder.embed(chunks.map((c) => `${c.title}\n${c.text}`)) : [];
    await repo.replaceDocument(
      job,
      {
        scope: doc.scope,
        title: doc.title,
        hash,
        embedder: embedder.id,
        dims,
        totalChars: Math.max(doc.fullChars ?? 0, doc.text.length),
        indexedChars,
      },
      chunks,
      vectors,
    );
    return 'indexed';
  };

  const scopeOf = (input: SearchInput, dims: number): ChunkScope => ({
    projectIds: input.projectIds,
    includeGlobal: input.includeGlobal,
    globalDocTypes: input.globalDocTypes,
    docTypes: input.docTypes,
    docIds: input.docIds,
    embedder: embedder.id,
    dims,
  });

  /** The scope's candidates counted from the per-project counts (an upper bound; see `chunkCountBound`). */
  const boundOf = (scope: ChunkScope) => repo.chunkCountBound(scope);

  const vectorChannel = async (
    input: SearchInput,
    qv: number[],
    dims: number,
    limit: number,
    opts: { exact?: boolean; bound?: Promise<number> } = {},
  ): Promise<ChunkRow[]> => {
    const scope = scopeOf(input, dims);
    if (!deps.database.vector) return repo.nearest(scope, qv, limit, 'sql', { kind: 'plain' });
    // A small candidate set (a project and the global documents, typically) is scanned exactly: it is cheap with
    // pgvector's distance in C and avoids the recall loss of a filtered graph search. Large sets use HNSW.
    const exactPlan: ScanPlan = { kind: 'exact' };
    // The reference: pgvector's distance (exact, in C) over every candidate, the index off.
    if (opts.exact) return repo.nearest(scope, qv, limit, 'pgvector', exactPlan);
    const bound = await (opts.bound ?? boundOf(scope));
    const small =
      bound <= EXACT_MAX_CANDIDATES ||
      // Types or ids may leave few of the projects' chunks: count them (up to the threshold).
      ((!!scope.docTypes?.length || scope.docIds !== undefined) &&
        (await repo.countChunks(scope, EXACT_MAX_CANDIDATES)) <= EXACT_MAX_CANDIDATES);
    if (small) return repo.nearest(scope, qv, limit, 'pgvector', exactPlan);
    const rows = await repo.nearest(scope, qv, limit, 'pgvector', {
      kind: 'hnsw',
      efSearch: Math.min(1000, Math.max(200, Math.round(limit * 10))),
      maxScanTuples: HNSW_MAX_SCAN_TUPLES,
    });
    // Too few of the visited tuples passed the filter (the bound counted chunks the filter leaves out): scan exactly.
    return rows.length < limit ? repo.nearest(scope, qv, limit, 'pgvector', exactPlan) : rows;
  };

  /**
   * Full-text matches. Over more than `EXACT_MAX_CANDIDATES` candidates only chunks holding all of the query's words
   * are ranked: in one big project, any-word matching returns most of the project (a frequent word is in nearly every
   * chunk) and ranking it takes seconds.
   */
  const textChannel = async (
    input: SearchInput,
    qv: number[] | null,
    dims: number,
    limit: number,
    bound: Promise<number>,
  ): Promise<ChunkRow[]> => {
    const words = queryWords(input.q);
    if (!words.length) return [];
    const match = (await bound) > EXACT_MAX_CANDIDATES ? 'all' : 'any';
    const how = deps.database.vector ? 'pgvector' : 'sql';
    return repo.keywordMatches(scopeOf(input, dims), words, qv, how, limit, match);
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
      const stale = await repo.staleDocuments(embedder.id, dims);
      if (!stale.length) return { requeued: 0 };
      await repo.clearHashes(stale.map((s) => s.id));
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
        await repo.removeDocument(job);
        return 'removed';
      }
      return store(job, doc);
    },
    indexLoaded: store,
    async search(input) {
      const { qv, dims } = await embedQuery(input.q);
      const pool = Math.max(input.k * 4, 24);
      const bound = boundOf(scopeOf(input, dims));
      bound.catch(() => {}); // awaited by the channels
      const [vec, txt] = await Promise.all([
        qv ? vectorChannel(input, qv, dims, pool, { bound }) : Promise.resolve([]),
        textChannel(input, qv, dims, pool, bound),
      ]);
      const fused = new Map<number, { row: ChunkRow; score: number; keyword: boolean }>();
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
          chunk_id: Number(row.id),
          chunk_ix: row.chunk_ix,
          location: row.location ?? {},
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
      const rows = await vectorChannel(input, qv, dims, input.k, { exact: opts.exact });
      return rows.map((r) => ({ id: Number(r.id), distance: Number(r.distance) }));
    },
    documentIds: (projectId, docType) => repo.documentIds(projectId, docType),
    coverage: (projectId, docType, docIds) => repo.coverage(projectId, docType, docIds),
  };
}
