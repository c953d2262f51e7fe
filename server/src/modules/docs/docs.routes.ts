/**
 * Public documentation routes (docs/ARCHITECTURE.md, Shared semantic index, help assistant, public docs).
 * The docs are also global `doc` documents of the semantic index (their loader is `docs.loader()`).
 */
import { Type } from 'typebox';
import { errors } from '../../http/schemas.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import type { DocsService } from './docs.service.ts';

const Lang = Type.Union([Type.Literal('en'), Type.Literal('uk')], {
  default: 'en',
  description: 'the language: en (default) or uk; a page missing in it falls back to the other',
});
/** One entry of the tree: a page with its children (a cyclic schema, named `DocsTreeNode` in the OpenAPI document). */
const Node = Type.Cyclic(
  {
    DocsTreeNode: Type.Object(
      {
        path: Type.String(),
        title: Type.String(),
        lang: Type.String(),
        children: Type.Optional(Type.Array(Type.Ref('DocsTreeNode'))),
      },
      { title: 'DocsTreeNode' },
    ),
  },
  'DocsTreeNode',
);

export function docsRoutes(app: TypedApp, { docs }: { docs: DocsService }): void {
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
        querystring: Type.Object({
          path: Type.String({
            minLength: 1,
            maxLength: 300,
            description: 'the page path as the tree gives it, e.g. skills',
          }),
          lang: Type.Optional(Lang),
        }),
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
}
