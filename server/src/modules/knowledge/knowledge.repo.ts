/**
 * SQL of the shared semantic index: `knowledge_documents` (one row per indexed document, key
 * `(coalesce(project_id, 0), doc_type, doc_id)`) and `knowledge_chunks` (text, heading path, `real[]` vector,
 * tsvector). The index (knowledge.index.ts) decides what to run; this file says how.
 */
import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { DocType, IndexJob, PassageLocation } from '../../lib/doc-sources.ts';

/** Which chunks a search may see: of these projects and/or global, of these types, of one embedder and dimension. */
export interface ChunkScope {
  projectIds: number[];
  includeGlobal: boolean;
  /** With `includeGlobal`: only global documents of these types; undefined: every global document. */
  globalDocTypes?: string[];
  /** Restrict to these document types; undefined or empty: all. */
  docTypes?: string[];
  /** Restrict to these document ids; undefined: all (an empty list matches nothing). */
  docIds?: string[];
  embedder: string;
  dims: number;
}

/** A chunk as search channels return it, with its distance to the query. */
export interface ChunkRow {
  id: number;
  project_id: number | null;
  doc_type: string;
  doc_id: string;
  chunk_ix: number;
  scope: 'project' | 'global';
  title: string;
  text: string;
  location: PassageLocation | null;
  distance: number;
}

/**
 * How a distance is computed: pgvector's `<=>` on `embedding::vector(D)` (uses the HNSW index), or
 * `1 − Σ a·b` in SQL over the `real[]` (exact; the vectors are L2-normalised).
 */
export type Distance = 'pgvector' | 'sql';

/**
 * How the vector query runs: `plain` as it is; `exact` a scan with index scans off (in a transaction);
 * `hnsw` through the HNSW index with `hnsw.ef_search`, iterative scans in relaxed order (pgvector ≥ 0.8: the graph
 * search goes on past filtered-out tuples until `limit` rows pass the scope filter or `maxScanTuples` tuples were
 * visited) and the rows sorted again by distance (in a transaction).
 */
export type ScanPlan =
  { kind: 'plain' } | { kind: 'exact' } | { kind: 'hnsw'; efSearch: number; maxScanTuples: number };

/** A document to store: its scope and title, content hash, embedder and dimension. */
export interface StoredDocument {
  scope: 'project' | 'global';
  title: string;
  hash: string;
  embedder: string;
  dims: number;
  /** Characters of the whole document, and of the part its chunks cover. */
  totalChars: number;
  indexedChars: number;
}

const INSERT_BATCH = 100;

/**
 * Build memory (MB) for an HNSW graph (m 16) of `vectors` vectors of `dims` dimensions: ~(4 × dims + 600) bytes per
 * vector with a tenth to spare (pgvector 0.8.7 on PGlite, 256 dimensions: the graph stopped fitting 2 MB after 1,320
 * vectors, ~1,590 bytes each), at least 512 and at most 1,024.
 */
export function buildMemoryMb(vectors: number, dims: number): number {
  const need = (vectors * (4 * dims + 600) * 1.1) / 2 ** 20;
  return Math.min(1024, Math.max(512, Math.ceil(need)));
}

const vecLiteral = (v: number[]) => `[${v.map((x) => (x === 0 ? '0' : x.toPrecision(7))).join(',')}]`;
const arrLiteral = (v: number[]) => `{${v.map((x) => (x === 0 ? '0' : x.toPrecision(7))).join(',')}}`;

const COLS = sql`c.id, c.project_id, c.doc_type, c.doc_id, c.chunk_ix, c.scope, c.title, c.text, c.location`;

function scopeFilter(s: ChunkScope): RawBuilder<boolean> {
  const parts: RawBuilder<unknown>[] = [];
  if (s.projectIds.length) parts.push(sql`c.project_id in (${sql.join(s.projectIds)})`);
  if (s.includeGlobal)
    parts.push(
      s.globalDocTypes
        ? s.globalDocTypes.length
          ? sql`(c.scope = 'global' and c.doc_type in (${sql.join(s.globalDocTypes)}))`
          : sql`false`
        : sql`c.scope = 'global'`,
    );
  const scope = parts.length ? sql`(${sql.join(parts, sql` or `)})` : sql`false`;
  const types = s.docTypes?.length ? sql` and c.doc_type in (${sql.join(s.docTypes)})` : sql``;
  const ids = s.docIds ? (s.docIds.length ? sql` and c.doc_id in (${sql.join(s.docIds)})` : sql` and false`) : sql``;
  return sql<boolean>`c.dims = ${sql.lit(s.dims)} and c.embedder = ${s.embedder} and ${scope}${types}${ids}`;
}

function distanceExpr(qv: number[], dims: number, how: Distance) {
  return how === 'pgvector'
    ? sql`((c.embedding::vector(${sql.lit(dims)})) <=> ${vecLiteral(qv)}::vector(${sql.lit(dims)}))`
    : sql`(1 - (select sum(a::float8 * b::float8) from unnest(c.embedding, ${arrLiteral(qv)}::real[]) as t(a, b)))`;
}

const sameDocument = (key: IndexJob) =>
  sql<boolean>`coalesce(project_id, 0) = ${key.project_id ?? 0} and doc_type = ${key.doc_type} and doc_id = ${key.doc_id}`;

/** The semantic index's queries over `db` (each runs its own transaction where it needs one). */
export function createKnowledgeRepo(db: Kysely<DB>) {
  return {
    /**
     * Create the HNSW index for dimension `dims` if missing:
     * `(embedding::vector(D)) vector_cosine_ops WHERE dims = D` (m 16, ef_construction 64), with build memory
     * (`maintenance_work_mem`) sized so that pgvector's graph of the chunks already stored stays in memory:
     * `buildMemoryMb` of their count, at least 512 MB and at most 1 GB (PGlite's WebAssembly memory ends at 2 GB).
     * Once the graph no longer fits, pgvector goes on inserting on disk (with a notice), about 2× slower per vector in
     * bench/rag-probe.ts.
     * Needs pgvector. Under an advisory lock: two instances starting together would otherwise race on the catalog
     * (`create index if not exists` is not safe concurrently: the second fails with a unique violation).
     */
    async createVectorIndex(dims: number): Promise<void> {
      const d = sql.lit(dims);
      const name = `knowledge_chunks_hnsw_${dims}`;
      const exists = async (q: Kysely<DB>) =>
        (await sql<{ ok: boolean }>`select to_regclass(${name}) is not null as ok`.execute(q)).rows[0].ok;
      if (await exists(db)) return;
      await db.transaction().execute(async (tx) => {
        await sql`select pg_advisory_xact_lock(hashtext(${name}))`.execute(tx);
        if (await exists(tx)) return;
        const n = await sql<{
          n: number;
        }>`select count(*)::float8 as n from knowledge_chunks where dims = ${d}`.execute(tx);
        await sql`set local maintenance_work_mem = ${sql.lit(`${buildMemoryMb(Number(n.rows[0].n), dims)}MB`)}`.execute(
          tx,
        );
        await sql`create index if not exists ${sql.id(name)} on knowledge_chunks using hnsw ((embedding::vector(${d})) vector_cosine_ops) where dims = ${d}`.execute(
          tx,
        );
      });
    },

    /** What is stored of a document: its content hash, embedder and dimension, or undefined. */
    documentState: (key: IndexJob) =>
      db
        .selectFrom('knowledge_documents')
        .select(['id', 'content_hash', 'embedder', 'dims'])
        .where(sameDocument(key))
        .executeTakeFirst(),

    /**
     * Replace a document and its chunks in one transaction, under a per-document advisory lock (two jobs of
     * the same document cannot interleave). `vectors[i]` is the embedding of `chunks[i]`.
     */
    async replaceDocument(
      key: IndexJob,
      doc: StoredDocument,
      chunks: Array<{ chunk_ix: number; title: string; text: string; location?: PassageLocation }>,
      vectors: number[][],
    ): Promise<void> {
      await db.transaction().execute(async (tx) => {
        await sql`select pg_advisory_xact_lock(hashtext(${`knowledge:${key.project_id ?? 0}:${key.doc_type}:${key.doc_id}`}))`.execute(
          tx,
        );
        const row = await sql<{ id: number }>`
          insert into knowledge_documents (project_id, doc_type, doc_id, scope, title, content_hash, embedder, dims, chunk_count, indexed_at, total_chars, indexed_chars)
          values (${key.project_id}, ${key.doc_type}, ${key.doc_id}, ${doc.scope}, ${doc.title}, ${doc.hash}, ${doc.embedder}, ${doc.dims}, ${chunks.length}, now(), ${doc.totalChars}, ${doc.indexedChars})
          on conflict ((coalesce(project_id, 0)), doc_type, doc_id) do update set
            scope = excluded.scope, title = excluded.title, content_hash = excluded.content_hash, embedder = excluded.embedder,
            dims = excluded.dims, chunk_count = excluded.chunk_count, indexed_at = excluded.indexed_at,
            total_chars = excluded.total_chars, indexed_chars = excluded.indexed_chars
          returning id`.execute(tx);
        const documentId = row.rows[0].id;
        await tx.deleteFrom('knowledge_chunks').where('document_id', '=', documentId).execute();
        for (let i = 0; i < chunks.length; i += INSERT_BATCH) {
          await tx
            .insertInto('knowledge_chunks')
            .values(
              chunks.slice(i, i + INSERT_BATCH).map((c, j) => ({
                document_id: documentId,
                project_id: key.project_id,
                doc_type: key.doc_type,
                doc_id: key.doc_id,
                scope: doc.scope,
                chunk_ix: c.chunk_ix,
                title: c.title,
                text: c.text,
                embedder: doc.embedder,
                dims: doc.dims,
                embedding: sql`${arrLiteral(vectors[i + j])}::real[]`,
                location: c.location && Object.keys(c.location).length ? JSON.stringify(c.location) : null,
              })),
            )
            .execute();
        }
      });
    },

    /** Remove a document (its chunks go with it). @returns whether it was indexed. */
    async removeDocument(key: IndexJob): Promise<boolean> {
      const r = await db.deleteFrom('knowledge_documents').where(sameDocument(key)).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },

    /** Documents embedded by another embedder or dimension (or none). */
    staleDocuments: (embedder: string, dims: number) =>
      db
        .selectFrom('knowledge_documents')
        .select(['id', 'project_id', 'doc_type', 'doc_id'])
        .where((eb) =>
          eb.or([
            eb('embedder', 'is', null),
            eb('embedder', '!=', embedder),
            eb('dims', 'is', null),
            eb('dims', '!=', dims),
          ]),
        )
        .execute(),

    /** Forget the content hash of documents, so their next index job re-embeds them. */
    async clearHashes(ids: number[]): Promise<void> {
      if (!ids.length) return;
      await db.updateTable('knowledge_documents').set({ content_hash: null }).where('id', 'in', ids).execute();
    },

    /** `doc_id`s of one type in a project (or global with null). */
    async documentIds(projectId: number | null, docType: DocType): Promise<string[]> {
      const rows = await db
        .selectFrom('knowledge_documents')
        .select('doc_id')
        .where(sql<boolean>`coalesce(project_id, 0) = ${projectId ?? 0}`)
        .where('doc_type', '=', docType)
        .execute();
      return rows.map((r) => r.doc_id);
    },

    /** `{indexed_chars, total_chars}` of the indexed documents of a type in a project, by `doc_id`. */
    async coverage(
      projectId: number,
      docType: DocType,
      docIds: string[],
    ): Promise<Map<string, { indexed_chars: number; total_chars: number }>> {
      if (!docIds.length) return new Map();
      const rows = await db
        .selectFrom('knowledge_documents')
        .select(['doc_id', 'indexed_chars', 'total_chars'])
        .where('project_id', '=', projectId)
        .where('doc_type', '=', docType)
        .where('doc_id', 'in', docIds)
        .where('indexed_chars', 'is not', null)
        .where('total_chars', 'is not', null)
        .execute();
      return new Map(
        rows.map((r) => [r.doc_id, { indexed_chars: Number(r.indexed_chars), total_chars: Number(r.total_chars) }]),
      );
    },

    /**
     * An upper bound of the chunks `scope` covers, from `knowledge_chunk_counts` (one row per project, kept by a
     * trigger on knowledge_documents): the chunks of its projects, plus every global chunk with `includeGlobal`.
     * Document types, ids and the embedder are not looked at (the bound counts every chunk of those projects).
     */
    async chunkCountBound(scope: Pick<ChunkScope, 'projectIds' | 'includeGlobal'>): Promise<number> {
      const keys = [...scope.projectIds, ...(scope.includeGlobal ? [0] : [])];
      if (!keys.length) return 0;
      const r = await sql<{ n: number }>`
        select coalesce(sum(chunks), 0)::float8 as n from knowledge_chunk_counts where project_key in (${sql.join(keys)})`.execute(
        db,
      );
      return Number(r.rows[0].n);
    },

    /** How many chunks `scope` covers, counted up to `max + 1` (enough to tell "more than max"). */
    async countChunks(scope: ChunkScope, max: number): Promise<number> {
      const n = await sql<{ n: number }>`
        select count(*)::int as n from (select 1 from knowledge_chunks c where ${scopeFilter(scope)} limit ${max + 1}) x`.execute(
        db,
      );
      return n.rows[0].n;
    },

    /**
     * The `limit` chunks of `scope` nearest to `qv`, nearest first. With the `hnsw` plan the index may answer fewer
     * than `limit` rows when few of the tuples it visits pass the filter (the caller decides what to do then).
     */
    async nearest(scope: ChunkScope, qv: number[], limit: number, how: Distance, plan: ScanPlan): Promise<ChunkRow[]> {
      const dist = distanceExpr(qv, scope.dims, how);
      const q = sql<ChunkRow>`
        select ${COLS}, ${dist} as distance
        from knowledge_chunks c
        where ${scopeFilter(scope)}
        order by ${dist}
        limit ${limit}`;
      if (plan.kind === 'plain') return (await q.execute(db)).rows;
      return db.transaction().execute(async (tx) => {
        if (plan.kind === 'exact') {
          await sql`set local enable_indexscan = off`.execute(tx);
          return (await q.execute(tx)).rows;
        }
        await sql`set local hnsw.ef_search = ${sql.lit(plan.efSearch)}`.execute(tx);
        await sql`set local hnsw.iterative_scan = relaxed_order`.execute(tx);
        await sql`set local hnsw.max_scan_tuples = ${sql.lit(plan.maxScanTuples)}`.execute(tx);
        // Relaxed order: the index answers nearly in order; the materialized rows are sorted again (pgvector's advice).
        return (await sql<ChunkRow>`with near as materialized (${q}) select * from near order by distance`.execute(tx))
          .rows;
      });
    },

    /**
     * The `limit` chunks of `scope` matching any of `words` (`match` `any`) or all of them (`all`) (full text,
     * `english`; best `ts_rank_cd` first), with their distance to `qv` (1 without a query vector).
     * @param words letters and digits only (they are put in a tsquery as they are).
     */
    async keywordMatches(
      scope: ChunkScope,
      words: string[],
      qv: number[] | null,
      how: Distance,
      limit: number,
      match: 'any' | 'all' = 'any',
    ): Promise<ChunkRow[]> {
      if (!words.length) return [];
      const tsq = words.map((w) => `'${w}'`).join(match === 'all' ? ' & ' : ' | ');
      const dist = qv ? distanceExpr(qv, scope.dims, how) : sql`1::float8`;
      const r = await sql<ChunkRow>`
        select ${COLS}, ${dist} as distance
        from knowledge_chunks c, to_tsquery('english', ${tsq}) as query
        where c.tsv @@ query and ${scopeFilter(scope)}
        order by ts_rank_cd(c.tsv, query) desc, c.id
        limit ${limit}`.execute(db);
      return r.rows;
    },

    // Personal data (privacy export and erasure, retention).

    /** Erasure: every chunk (vector) and document of a project in the semantic index. */
    async eraseProject(tx: Transaction<DB>, projectId: number): Promise<void> {
      await tx.deleteFrom('knowledge_chunks').where('project_id', '=', projectId).execute();
      await tx.deleteFrom('knowledge_documents').where('project_id', '=', projectId).execute();
    },

    /** Erasure: global documents of a type (e.g. the user's published skills) with their chunks. */
    async eraseGlobalDocuments(tx: Transaction<DB>, docType: string, docIds: string[]): Promise<void> {
      if (!docIds.length) return;
      const docs = tx
        .selectFrom('knowledge_documents')
        .select('id')
        .where('project_id', 'is', null)
        .where('doc_type', '=', docType)
        .where('doc_id', 'in', docIds);
      await tx.deleteFrom('knowledge_chunks').where('document_id', 'in', docs).execute();
      await tx
        .deleteFrom('knowledge_documents')
        .where('project_id', 'is', null)
        .where('doc_type', '=', docType)
        .where('doc_id', 'in', docIds)
        .execute();
    },
  };
}

export type KnowledgeRepo = ReturnType<typeof createKnowledgeRepo>;
