/**
 * Project-facing knowledge operations (docs/ARCHITECTURE.md, Shared semantic index, help assistant, public docs): RAG
 * search within a project, memory refresh of the project's key files, and the removed fetch-artifact route.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Access } from '../../access/access.ts';
import type { Actor } from '../../http/auth.ts';
import { BadRequest, Gone } from '../../http/errors.ts';
import type { DocLoader, DocType, IndexJob } from '../../lib/doc-sources.ts';
import type { Logger } from '../../lib/logger.ts';
import { resolveInsideSync } from '../../lib/paths.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { Hit, KnowledgeIndex } from './knowledge.index.ts';

/**
 * Document types a caller may name in `doc_types` (docs/ARCHITECTURE.md, Shared semantic index, help assistant, public
 * docs).
 */
export const SEARCHABLE_TYPES = ['wiki', 'issue', 'skill', 'transcript', 'note_source'] as const;

/** Key files of a project's working directory embedded by memory refresh, in this order. */
export const MEMORY_FILES = ['MANIFEST.md', 'CLAUDE.md', 'AGENTS.md', 'README.md', 'ROADMAP.md'];
/** At most this many `docs/*.md` files (by name) are embedded. */
export const MEMORY_DOCS_MAX = 20;
/** Bytes read of each memory file; a longer file is indexed up to this size. */
export const MEMORY_FILE_CAP = 256 * 1024;
/** The project record (display name, description, niche, protocol) is indexed under this doc_id. */
export const MANIFEST_DOC_ID = 'project-manifest';

const DOCS_FILE = /^docs\/[A-Za-z0-9._ -]+\.md$/;

/** Whether `docId` names a memory file the refresh may index (no traversal). */
export function isMemoryFile(docId: string): boolean {
  return MEMORY_FILES.includes(docId) || (DOCS_FILE.test(docId) && !docId.includes('..'));
}

/** Memory files present in a project directory now (relative paths). */
export function listMemoryFiles(dir: string): string[] {
  const out = MEMORY_FILES.filter((f) => fs.existsSync(path.join(dir, f)) && fs.statSync(path.join(dir, f)).isFile());
  const docs = path.join(dir, 'docs');
  if (fs.existsSync(docs) && fs.statSync(docs).isDirectory()) {
    const names = fs
      .readdirSync(docs, { withFileTypes: true })
      .filter((e) => e.isFile() && e.name.toLowerCase().endsWith('.md'))
      .map((e) => `docs/${e.name}`)
      .filter((p) => DOCS_FILE.test(p))
      .sort()
      .slice(0, MEMORY_DOCS_MAX);
    out.push(...names);
  }
  return out;
}

/**
 * The loader of `memory` documents: the project manifest from the database, or a key file read from the
 * project's working directory (refusing paths outside it, symlinks included), cut to `MEMORY_FILE_CAP`.
 */
export function memoryLoader(deps: {
  /** The project's manifest fields (projects.repo.ts `projectManifest`), or undefined when it is gone. */
  manifest(projectId: number): Promise<
    | {
        name: string;
        display_name: string;
        description: string;
        niche: string | null;
        team_preset: string | null;
        protocol: string | null;
      }
    | undefined
  >;
  access: Pick<Access, 'projectDir'>;
}): DocLoader {
  return async (projectId, docId) => {
    if (projectId === null) return null;
    if (docId === MANIFEST_DOC_ID) {
      const p = await deps.manifest(projectId);
      if (!p) return null;
      const text = [
        `# ${p.display_name} (${p.name})`,
        p.description,
        p.niche ? `Niche: ${p.niche}` : '',
        p.team_preset ? `Team preset: ${p.team_preset}` : '',
        p.protocol ? `## Protocol\n${p.protocol}` : '',
      ]
        .filter(Boolean)
        .join('\n\n');
      return { title: `Project ${p.display_name}`, text, scope: 'project' };
    }
    if (!isMemoryFile(docId)) return null;
    try {
      // Throws when the path leads outside the project directory (symlinks included) or the directory is gone.
      const { real } = resolveInsideSync(deps.access.projectDir(projectId), docId);
      const fd = fs.openSync(real, 'r');
      try {
        const buf = Buffer.alloc(MEMORY_FILE_CAP);
        const n = fs.readSync(fd, buf, 0, MEMORY_FILE_CAP, 0);
        const text = buf.subarray(0, n).toString('utf8');
        // A longer file is indexed in part, and its document says so (its whole length, the rest counted in bytes).
        const size = fs.fstatSync(fd).size;
        return { title: docId, text, scope: 'project', ...(size > n ? { fullChars: text.length + (size - n) } : {}) };
      } finally {
        fs.closeSync(fd);
      }
    } catch {
      return null;
    }
  };
}

export interface SearchQuery {
  q: string;
  k?: number;
  include_global?: boolean;
  doc_types?: string;
}

export interface KnowledgeDeps {
  access: Access;
  index: KnowledgeIndex;
  jobs: JobQueue;
  log: Logger;
  /** Global documents kept in the index from start (the public docs): their type and current ids. */
  globalDocs: Array<{ docType: DocType; ids(): string[] }>;
}

/**
 * Bring the global documents of `sources` in the index up to date (docs/ARCHITECTURE.md, Shared semantic index, help
 * assistant, public docs): each current id is indexed (an unchanged one costs one lookup: content hash and embedder),
 * ids indexed before but gone now are removed. A document that cannot be indexed now (a remote embedder is down) is
 * handed to the durable job queue, which retries it. Run by a start in the background (`startBackground`: on a new
 * database made without the seed image this embeds every page, ~0.5 s with the local embedder, measured with
 * bench/startup.ts) and by `npm install` for the seed image (seed-cli.ts), so a new DATA_DIR starts with them.
 * @param opts.closing checked between two documents: true ends the loop early (shutdown).
 * @returns how many documents were looked at (indexed, unchanged or removed).
 */
export async function indexGlobalDocuments(opts: {
  index: Pick<KnowledgeIndex, 'indexDocument' | 'documentIds'>;
  jobs: Pick<JobQueue, 'send'>;
  log: Pick<Logger, 'info' | 'warn'>;
  sources: KnowledgeDeps['globalDocs'];
  closing?: () => boolean;
}): Promise<number> {
  const { index, log } = opts;
  const t0 = performance.now();
  let documents = 0;
  for (const source of opts.sources) {
    try {
      const ids = source.ids();
      const gone = (await index.documentIds(null, source.docType)).filter((d) => !ids.includes(d));
      for (const doc_id of [...ids, ...gone]) {
        if (opts.closing?.()) return documents;
        const job: IndexJob = { project_id: null, doc_type: source.docType, doc_id };
        documents++;
        try {
          await index.indexDocument(job);
        } catch (err) {
          log.warn({ err: (err as Error).message, doc_id }, 'global document not indexed at start; queued for retry');
          await opts.jobs.send('knowledge.index', job);
        }
      }
    } catch (err) {
      log.warn({ err: (err as Error).message, doc_type: source.docType }, 'global documents could not be indexed');
    }
  }
  if (!opts.closing?.()) log.info({ documents, ms: Math.round(performance.now() - t0) }, 'global documents indexed');
  return documents;
}

export function createKnowledgeService(deps: KnowledgeDeps) {
  const { index, log } = deps;
  let retry: NodeJS.Timeout | undefined;
  let closing = false;
  /** The global documents' indexing started by `start` (settled: done or given up). */
  let synced: Promise<void> = Promise.resolve();

  /** The index's start step, retried with back-off while a remote embedder cannot be reached. */
  const startIndex = async (attempt = 0): Promise<void> => {
    if (closing) return;
    try {
      await index.start();
    } catch (err) {
      log.warn({ err: (err as Error).message, attempt }, 'semantic index start step failed; retrying');
      retry = setTimeout(() => void startIndex(attempt + 1), Math.min(300_000, 5000 * 2 ** attempt));
      retry.unref();
    }
  };

  const syncGlobalDocs = async (): Promise<void> => {
    await indexGlobalDocuments({ index, jobs: deps.jobs, log, sources: deps.globalDocs, closing: () => closing });
  };

  return {
    /** Start step: the index (HNSW, stale documents). */
    async start(): Promise<void> {
      closing = false;
      await startIndex();
    },

    /**
     * Last start step: index the global documents in the background (not waited for). Started after every other
     * start step, which it would otherwise slow down: the embedded database has one connection.
     */
    startBackground(): void {
      if (closing) return;
      synced = syncGlobalDocs().catch((err) =>
        log.warn({ err: (err as Error).message }, 'global documents could not be indexed'),
      );
    },

    /**
     * Settles when the global documents started by `start` are indexed (or handed to the job queue), or after
     * `maxMs` (default 10 000), whichever is first: the help assistant waits for it right after a start.
     */
    async globalDocsSynced(maxMs = 10_000): Promise<void> {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([synced, new Promise<void>((r) => (timer = setTimeout(r, maxMs).unref()))]);
      clearTimeout(timer);
    },

    /** Stop retrying the start step, and end the global documents' indexing (waited for). */
    async stop(): Promise<void> {
      closing = true;
      if (retry) clearTimeout(retry);
      await synced;
    },

    /**
     * `GET /projects/:name/rag/search`: hybrid search over the project's documents (and global ones).
     * @returns `{query, project, hits}`, hits best first with rank, doc_type, doc_id, chunk_id, chunk_ix, location,
     * distance, scope, title, text (research-note passages too: `doc_type` note_source, `doc_id` the source id).
     * @throws 404/403 from access; 400 `invalid_doc_types`; 503 `embeddings_unavailable`.
     */
    async search(
      actor: Actor,
      name: string,
      query: SearchQuery,
    ): Promise<{ query: string; project: string; hits: Omit<Hit, 'project_id' | 'keyword_match'>[] }> {
      const project = await deps.access.project(actor, name);
      let docTypes: string[] | undefined;
      if (query.doc_types !== undefined && query.doc_types.trim() !== '') {
        docTypes = [
          ...new Set(
            query.doc_types
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean),
          ),
        ];
        const bad = docTypes.filter((t) => !(SEARCHABLE_TYPES as readonly string[]).includes(t));
        if (bad.length)
          throw new BadRequest(
            'invalid_doc_types',
            `Unknown document type(s): ${bad.join(', ')}; use a comma list of ${SEARCHABLE_TYPES.join(', ')}.`,
          );
      }
      const hits = await deps.index.search({
        q: query.q,
        k: query.k ?? 6,
        projectIds: [project.id],
        includeGlobal: query.include_global ?? true,
        docTypes,
      });
      return {
        query: query.q,
        project: project.name,
        hits: hits.map(({ project_id: _p, keyword_match: _k, ...h }) => h),
      };
    },

    /**
     * `POST /projects/:name/memory/refresh`: queue re-embedding of the project manifest and the key files
     * present in its working directory (`MEMORY_FILES`, up to `MEMORY_DOCS_MAX` `docs/*.md`), and removal
     * of memory documents whose file is gone. Unchanged files are skipped by the indexer (content hash).
     * @returns `{ok, project, queued, removed}` (doc_ids).
     */
    async refreshMemory(
      actor: Actor,
      name: string,
    ): Promise<{
      ok: boolean;
      project: string;
      queued: string[];
      removed: string[];
      cut: Array<{ doc_id: string; indexed_bytes: number; total_bytes: number }>;
    }> {
      const project = await deps.access.project(actor, name);
      const files = listMemoryFiles(project.dir);
      const present = [MANIFEST_DOC_ID, ...files];
      // Files longer than the cap are indexed from their beginning only: said here, not left silent.
      const cut = files.flatMap((f) => {
        let size = 0;
        try {
          size = fs.statSync(resolveInsideSync(project.dir, f).real).size;
        } catch {
          // outside the project (a symlink) or gone meanwhile: the loader skips it too
        }
        return size > MEMORY_FILE_CAP ? [{ doc_id: f, indexed_bytes: MEMORY_FILE_CAP, total_bytes: size }] : [];
      });
      const known = await deps.index.documentIds(project.id, 'memory');
      const removed = known.filter((d) => !present.includes(d));
      for (const docId of [...present, ...removed]) {
        await deps.jobs.send('knowledge.index', {
          project_id: project.id,
          doc_type: 'memory',
          doc_id: docId,
        } satisfies IndexJob);
      }
      return { ok: true, project: project.name, queued: present, removed, cut };
    },

    /** `POST /projects/:name/memory/fetch-artifact`: removed. @throws Gone 410 always (after the access check). */
    async fetchArtifact(actor: Actor, name: string): Promise<never> {
      await deps.access.project(actor, name);
      throw new Gone('memory/fetch-artifact was removed; use GET /projects/:name/rag/search.', 'gone');
    },
  };
}

export type KnowledgeService = ReturnType<typeof createKnowledgeService>;
