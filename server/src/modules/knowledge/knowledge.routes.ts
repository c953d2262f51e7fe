/**
 * Routes of the knowledge area (docs/ARCHITECTURE.md, Shared semantic index, help assistant, public docs): RAG search,
 * memory refresh, fetch-artifact (410). The index job is registered by knowledge.jobs.ts; the start step is the
 * service's.
 */
import { Type } from 'typebox';
import { requireActor } from '../../http/auth.ts';
import { errors, PassageLocation, ProjectParam } from '../../http/schemas.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import type { KnowledgeService } from './knowledge.service.ts';

const NameParam = ProjectParam;
const Hit = Type.Object({
  rank: Type.Integer({ minimum: 1 }),
  doc_type: Type.String({
    description:
      'wiki, issue, skill, transcript, note_source (a research-note source: doc_id is the source id); also memory, doc, catalog_skill when doc_types is omitted',
  }),
  doc_id: Type.String(),
  chunk_id: Type.Integer({ description: 'the passage (stable until its document is indexed again)' }),
  chunk_ix: Type.Integer({ minimum: 0 }),
  location: PassageLocation,
  distance: Type.Number({ description: 'cosine distance between the query and the chunk' }),
  scope: Type.Union([Type.Literal('project'), Type.Literal('global')]),
  title: Type.String({ description: "the document title and the chunk's heading path" }),
  text: Type.String(),
});
const SearchQuery = Type.Object({
  q: Type.String({ minLength: 1, maxLength: 2000, description: 'what to look for, in plain words' }),
  k: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 25, default: 6, description: 'hits to return (1–25, default 6)' }),
  ),
  include_global: Type.Optional(
    Type.Boolean({
      default: true,
      description: 'also search global skills and the public documentation (default true)',
    }),
  ),
  doc_types: Type.Optional(
    Type.String({
      maxLength: 200,
      description: 'comma subset of wiki, issue, skill, transcript, note_source (default: every type)',
    }),
  ),
});

export function knowledgeRoutes(app: TypedApp, { knowledge: service }: { knowledge: KnowledgeService }): void {
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
            cut: Type.Array(
              Type.Object({
                doc_id: Type.String(),
                indexed_bytes: Type.Integer({ description: 'the first bytes indexed (the cap, 256 KiB)' }),
                total_bytes: Type.Integer(),
              }),
              { description: 'key files longer than the cap: only their beginning is indexed' },
            ),
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
}
