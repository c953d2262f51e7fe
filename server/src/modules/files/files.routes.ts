/**
 * File routes of a project's working directory (docs/ARCHITECTURE.md, Issues, skills, wiki, files, pins, learnings).
 * One service call each.
 */
import { Type } from 'typebox';
import { requireActor } from '../../http/auth.ts';
import { DateTime, errors, FilePart, ProjectParam } from '../../http/schemas.ts';
import { multipartRoutes } from '../../http/multipart.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import type { FilesService } from './files.service.ts';

const RelPath = Type.String({ maxLength: 1000, description: 'a path relative to the project directory' });
const PathQuery = Type.Object({ path: RelPath });
const ListQuery = Type.Object({
  path: Type.Optional(
    Type.String({
      maxLength: 1000,
      description: 'the folder to list, relative to the project directory (default: its root)',
    }),
  ),
});
const ReadQuery = Type.Object({
  path: RelPath,
  raw: Type.Optional(
    Type.Union([Type.Boolean(), Type.Literal('1'), Type.Literal('0')], { description: 'true or 1: answer the bytes' }),
  ),
});
const PathBody = Type.Object({ path: Type.String({ minLength: 1, maxLength: 1000 }) }, { additionalProperties: false });
const SaveBody = Type.Object(
  { path: Type.String({ minLength: 1, maxLength: 1000 }), content: Type.String() },
  { additionalProperties: false },
);
const CloneBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2000 }),
    dir: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
  },
  { additionalProperties: false },
);
const Entry = Type.Object({
  name: Type.String(),
  path: Type.String(),
  type: Type.String({ description: 'file, dir, symlink or other' }),
  size: Type.Integer(),
  modified_at: DateTime(),
});
const Listing = Type.Object({ path: Type.String(), entries: Type.Array(Entry) });
const FileBody = Type.Object({
  path: Type.String(),
  content: Type.String(),
  encoding: Type.String({ description: 'utf8 or base64' }),
  size: Type.Integer(),
  modified_at: DateTime(),
});
const PathOk = Type.Object({ ok: Type.Boolean(), path: Type.String() });
const Saved = Type.Object({ ok: Type.Boolean(), path: Type.String(), size: Type.Integer() });
const Uploaded = Type.Object({
  ok: Type.Boolean(),
  files: Type.Array(Type.Object({ path: Type.String(), size: Type.Integer() })),
});

export function filesRoutes(app: TypedApp, { files }: { files: FilesService }): void {
  const tags = ['files'];
  const p = '/api/crm/projects/:name/files';

  app.get(
    p,
    {
      schema: {
        tags,
        summary: 'List a folder',
        params: ProjectParam,
        querystring: ListQuery,
        response: { 200: Listing, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => files.list(requireActor(req), req.params.name, req.query.path),
  );
  app.get(
    `${p}/read`,
    {
      schema: {
        tags,
        summary: 'Read a file (JSON, or the bytes with raw=1)',
        params: ProjectParam,
        querystring: ReadQuery,
        response: {
          200: Type.Union([
            FileBody,
            Type.Unsafe<NodeJS.ReadableStream>({
              type: 'string',
              format: 'binary',
              description: 'raw=1: the bytes (application/octet-stream)',
            }),
          ]),
          ...errors(400, 401, 403, 404, 413),
        },
      },
    },
    async (req, reply) => {
      const r = await files.read(
        requireActor(req),
        req.params.name,
        req.query.path,
        req.query.raw === true || req.query.raw === '1',
      );
      if (!r.raw) return r.body;
      return reply
        .header('content-type', 'application/octet-stream')
        .header('x-content-type-options', 'nosniff')
        .header('content-length', r.size)
        .header('content-disposition', `inline; filename*=UTF-8''${encodeURIComponent(r.filename)}`)
        .send(r.stream);
    },
  );
  app.put(
    `${p}/save`,
    {
      bodyLimit: 10 * 1024 * 1024,
      schema: {
        tags,
        summary: 'Write a text file',
        params: ProjectParam,
        body: SaveBody,
        response: { 200: Saved, ...errors(400, 401, 403, 404, 413, 507) },
      },
    },
    async (req) => files.save(requireActor(req), req.params.name, req.body),
  );
  app.post(
    `${p}/mkdir`,
    {
      schema: {
        tags,
        summary: 'Create a folder',
        params: ProjectParam,
        body: PathBody,
        response: { 201: PathOk, ...errors(400, 401, 403, 404, 409, 413, 507) },
      },
    },
    async (req, reply) => reply.status(201).send(await files.mkdir(requireActor(req), req.params.name, req.body.path)),
  );
  app.post(
    `${p}/create`,
    {
      schema: {
        tags,
        summary: 'Create an empty file',
        params: ProjectParam,
        body: PathBody,
        response: { 201: PathOk, ...errors(400, 401, 403, 404, 409, 413, 507) },
      },
    },
    async (req, reply) => reply.status(201).send(await files.create(requireActor(req), req.params.name, req.body.path)),
  );
  app.delete(
    `${p}/delete`,
    {
      schema: {
        tags,
        summary: 'Delete a file or folder (recursively)',
        params: ProjectParam,
        querystring: PathQuery,
        response: { 200: PathOk, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => files.remove(requireActor(req), req.params.name, req.query.path),
  );
  multipartRoutes(app, (scope) =>
    scope.post(
      `${p}/upload`,
      {
        schema: {
          tags,
          summary: 'Upload files (multipart `file`, optional field `path`: the folder), up to 100 MB each',
          params: ProjectParam,
          consumes: ['multipart/form-data'],
          multipart: Type.Object({
            file: Type.Array(FilePart('a file, kept under its own name (a part per file)'), {
              minItems: 1,
              description: 'the files, each at most FILES_UPLOAD_LIMIT_BYTES (100 MB by default)',
            }),
            path: Type.Optional(
              Type.String({
                description: 'the folder to put them in, relative to the project directory (default: its root)',
              }),
            ),
          }),
          response: { 201: Uploaded, ...errors(400, 401, 403, 404, 413, 507) },
        },
      },
      async (req, reply) =>
        reply
          .status(201)
          .send(
            await files.upload(
              requireActor(req),
              req.params.name,
              req.parts({ limits: { fileSize: files.uploadLimitBytes } }),
            ),
          ),
    ),
  );
  app.post(
    `${p}/clone`,
    {
      schema: {
        tags,
        summary: 'git clone an http(s):// repository (60 s limit)',
        description:
          'Only http and https; the host must resolve to public addresses (400 url_not_allowed otherwise, unless ' +
          'OUTBOUND_ALLOW_PRIVATE names it), git connects to the checked address and follows no redirect. A clone ' +
          'that fails answers 502 clone_failed with one generic message.',
        params: ProjectParam,
        body: CloneBody,
        response: { 201: PathOk, ...errors(400, 401, 403, 404, 409, 413, 502, 504, 507) },
      },
    },
    async (req, reply) => reply.status(201).send(await files.clone(requireActor(req), req.params.name, req.body)),
  );
}
