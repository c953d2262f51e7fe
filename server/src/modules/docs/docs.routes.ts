/**
 * Public documentation routes (specification, Public documentation; Authentication rule 3: public).
 * Also registers the `doc` loader and indexes the public docs as global documents at start.
 */
import { Type } from '@sinclair/typebox';
import type { Module } from '../../app.ts';
import { errors } from '../../http/schemas.ts';
import { KNOWLEDGE_INDEX_JOB, type IndexJob } from '../../lib/doc-sources.ts';
import { createDocsService } from './docs.service.ts';

const Lang = Type.Union([Type.Literal('en'), Type.Literal('uk')], { default: 'en' });
const Node = Type.Recursive((This) =>
  Type.Object({
    path: Type.String(),
    title: Type.String(),
    lang: Type.String(),
    children: Type.Optional(Type.Array(This)),
  }),
);

export const docsModule: Module = (app, deps) => {
  const docs = createDocsService();
  deps.docSources.register('doc', docs.loader());
  app.decorate('docsService', docs);

  // Index the public docs as global documents at start, before the app is ready, so the help assistant can use
  // them at once and no indexing runs in the background at shutdown. Unchanged pages cost one lookup each
  // (content hash); removed pages are dropped. A page that cannot be indexed now (e.g. a remote embedder is
  // down) is handed to the durable job queue, which retries it.
  app.addHook('onReady', async () => {
    try {
      const pages = docs.allPages();
      const rows = await deps.db
        .selectFrom('knowledge_documents')
        .select('doc_id')
        .where('doc_type', '=', 'doc')
        .where('project_id', 'is', null)
        .execute();
      const gone = rows.map((r) => r.doc_id).filter((d) => !pages.includes(d));
      for (const doc_id of [...pages, ...gone]) {
        const job: IndexJob = { project_id: null, doc_type: 'doc', doc_id };
        try {
          await app.knowledgeIndex.indexDocument(job);
        } catch (err) {
          app.log.warn({ err: (err as Error).message, doc_id }, 'public doc not indexed at start; queued for retry');
          await deps.jobs.send(KNOWLEDGE_INDEX_JOB, job);
        }
      }
    } catch (err) {
      app.log.warn({ err: (err as Error).message }, 'public docs could not be indexed at start');
    }
  });

  const tags = ['docs'];
  const pub = { auth: 'public' as const };
  app.get(
    '/api/crm/docs/tree',
    {
      config: pub,
      schema: {
        tags,
        security: [],
        summary: 'The public documentation tree',
        querystring: Type.Object({ lang: Type.Optional(Lang) }),
        response: { 200: Type.Object({ lang: Type.String(), tree: Type.Array(Node) }), ...errors(400) },
      },
    },
    async (req) => docs.tree(req.query.lang),
  );
  app.get(
    '/api/crm/docs/file',
    {
      config: pub,
      schema: {
        tags,
        security: [],
        summary: 'One documentation page (falls back to the other language)',
        querystring: Type.Object({ path: Type.String({ minLength: 1, maxLength: 300 }), lang: Type.Optional(Lang) }),
        response: {
          200: Type.Object({
            path: Type.String(),
            lang: Type.String(),
            requested_lang: Type.String(),
            fallback: Type.Boolean(),
            title: Type.String(),
            content: Type.String(),
          }),
          ...errors(400, 403, 404),
        },
      },
    },
    async (req) => docs.file(req.query.path, req.query.lang),
  );
};

declare module 'fastify' {
  interface FastifyInstance {
    /** The public documentation (help assistant's keyword search). */
    docsService: import('./docs.service.ts').DocsService;
  }
}
