/**
 * Wiki routes (docs/ARCHITECTURE.md, Issues, skills, wiki, files, pins, learnings): tree, read, save, ZIP download. One
 * service call each.
 */
import { Type } from 'typebox';
import { requireActor } from '../../http/auth.ts';
import { errors } from '../../http/schemas.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import type { WikiService } from './wiki.service.ts';
import * as S from './wiki.schemas.ts';

export function wikiRoutes(app: TypedApp, { wiki }: { wiki: WikiService }): void {
  const tags = ['wiki'];
  const p = '/api/crm/projects/:name/wiki';

  app.get(
    `${p}/tree`,
    {
      schema: {
        tags,
        summary: 'Page tree',
        params: S.ProjectParam,
        response: { 200: S.Tree, ...errors(401, 403, 404) },
      },
    },
    async (req) => wiki.tree(requireActor(req), req.params.name),
  );
  app.get(
    `${p}/file`,
    {
      schema: {
        tags,
        summary: 'Read a page',
        params: S.ProjectParam,
        querystring: S.PathQuery,
        response: { 200: S.Page, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => wiki.read(requireActor(req), req.params.name, req.query.path),
  );
  app.put(
    `${p}/save`,
    {
      bodyLimit: 1024 * 1024 * 2,
      schema: {
        tags,
        summary: 'Save a page (re-embedded in the background)',
        params: S.ProjectParam,
        body: S.SaveBody,
        response: { 200: S.Page, ...errors(400, 401, 403, 404, 413, 507) },
      },
    },
    async (req) => wiki.save(requireActor(req), req.params.name, req.body),
  );
  app.get(
    `${p}/download`,
    {
      schema: {
        tags,
        summary: 'The whole wiki as a ZIP archive (streamed)',
        params: S.ProjectParam,
        produces: ['application/zip'],
        response: {
          200: Type.Unsafe<unknown>({ type: 'string', format: 'binary', description: 'application/zip' }),
          ...errors(401, 403, 404),
        },
      },
    },
    async (req, reply) => {
      const { filename, stream } = await wiki.download(requireActor(req), req.params.name);
      return reply
        .header('content-type', 'application/zip')
        .header('content-disposition', `attachment; filename="${filename.replace(/[^A-Za-z0-9._-]/g, '_')}"`)
        .send(stream);
    },
  );
}
