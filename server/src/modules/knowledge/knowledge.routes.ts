/**
 * Routes of the knowledge area (specification, Memory and knowledge): RAG search, memory refresh,
 * fetch-artifact (410). Registers the index job handler, the `memory` document loader and the start step.
 */
import { Type } from '@sinclair/typebox';
import type { Module } from '../../app.ts';
import { requireActor } from '../../http/auth.ts';
import { errors } from '../../http/schemas.ts';
import { KNOWLEDGE_INDEX_JOB, type IndexJob } from '../../lib/doc-sources.ts';
import { createKnowledgeIndex } from './knowledge.index.ts';
import { createKnowledgeService, memoryLoader } from './knowledge.service.ts';

const NameParam = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) });
const Hit = Type.Object({
  rank: Type.Integer({ minimum: 1 }),
  doc_type: Type.String({
    description: 'wiki, issue, skill, transcript (also memory, doc, note_source when doc_types is omitted)',
  }),
  doc_id: Type.String(),
  chunk_ix: Type.Integer({ minimum: 0 }),
  distance: Type.Number({ description: 'cosine distance between the query and the chunk' }),
  scope: Type.Union([Type.Literal('project'), Type.Literal('global')]),
  title: Type.String({ description: "the document title and the chunk's heading path" }),
  text: Type.String(),
});
const SearchQuery = Type.Object({
  q: Type.String({ minLength: 1, maxLength: 2000 }),
  k: Type.Optional(Type.Integer({ minimum: 1, maximum: 25, default: 6 })),
  include_global: Type.Optional(Type.Boolean({ default: true })),
  doc_types: Type.Optional(
    Type.String({ maxLength: 200, description: 'comma subset of wiki, issue, skill, transcript' }),
  ),
});

export const knowledgeModule: Module = (app, deps) => {
  const log = app.log;
  const index = createKnowledgeIndex({
    db: deps.db,
    database: deps.database,
    embedder: deps.embeddings,
    docSources: deps.docSources,
    jobs: deps.jobs,
    log,
  });
  const service = createKnowledgeService({ access: deps.access, index, jobs: deps.jobs });
  deps.docSources.register('memory', memoryLoader({ db: deps.db, access: deps.access }));
  deps.jobs.define<IndexJob>(
    KNOWLEDGE_INDEX_JOB,
    async (job) => {
      await index.indexDocument(job);
    },
    // A batch of up to 20 jobs per poll (pg-boss waits the polling interval between fetches); a failure retries the
    // whole batch, which is harmless because indexing is idempotent (unchanged content is skipped).
    { batchSize: 20, retryLimit: 5, retryDelay: 10, expireInSeconds: 300, pollingIntervalSeconds: 0.5 },
  );
  app.decorate('knowledgeIndex', index);
  // The agent's search_knowledge tool: the project's documents plus global ones, nothing of other projects.
  deps.agentPorts.search = {
    async search(projectId, q, k) {
      const hits = await index.search({
        q,
        k: Math.min(25, Math.max(1, Math.trunc(k) || 6)),
        projectIds: [projectId],
        includeGlobal: true,
      });
      return hits.map((h) => ({ doc_type: h.doc_type, doc_id: h.doc_id, text: h.text, distance: h.distance }));
    },
  };

  let retry: NodeJS.Timeout | undefined;
  let closing = false;
  const startIndex = async (attempt = 0) => {
    if (closing) return;
    try {
      await index.start();
    } catch (err) {
      log.warn({ err: (err as Error).message, attempt }, 'semantic index start step failed; retrying');
      retry = setTimeout(() => void startIndex(attempt + 1), Math.min(300_000, 5000 * 2 ** attempt));
      retry.unref();
    }
  };
  app.addHook('onReady', async () => {
    await startIndex();
  });
  app.addHook('preClose', async () => {
    closing = true;
    if (retry) clearTimeout(retry);
  });

  const tags = ['knowledge'];
  app.get(
    '/api/crm/projects/:name/rag/search',
    {
      schema: {
        tags,
        summary: 'Hybrid semantic and full-text search over the project (and global) documents',
        params: NameParam,
        querystring: SearchQuery,
        response: {
          200: Type.Object({ query: Type.String(), project: Type.String(), hits: Type.Array(Hit) }),
          ...errors(400, 401, 403, 404, 503),
        },
      },
    },
    async (req) => service.search(requireActor(req), req.params.name, req.query),
  );
  app.post(
    '/api/crm/projects/:name/memory/refresh',
    {
      schema: {
        tags,
        summary: 'Re-embed the project manifest and key files of its working directory (queued)',
        params: NameParam,
        response: {
          200: Type.Object({
            ok: Type.Boolean(),
            project: Type.String(),
            queued: Type.Array(Type.String()),
            removed: Type.Array(Type.String()),
          }),
          ...errors(401, 403, 404),
        },
      },
    },
    async (req) => service.refreshMemory(requireActor(req), req.params.name),
  );
  app.post(
    '/api/crm/projects/:name/memory/fetch-artifact',
    {
      schema: {
        tags,
        summary: 'Removed: always 410 Gone',
        params: NameParam,
        response: { ...errors(401, 403, 404, 410) },
      },
    },
    async (req) => service.fetchArtifact(requireActor(req), req.params.name),
  );
};

declare module 'fastify' {
  interface FastifyInstance {
    /** The shared semantic index (help assistant, benchmark). */
    knowledgeIndex: import('./knowledge.index.ts').KnowledgeIndex;
  }
}
