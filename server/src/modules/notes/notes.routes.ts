/**
 * Research notes routes (docs/ARCHITECTURE.md, Research notes): notes, sources (multipart, URL, project file, chunked
 * upload), rename, delete, the progress stream, the grounded chat. Each route translates HTTP to one service call.
 */
import fs from 'node:fs';
import type { Readable } from 'node:stream';
import { Type } from 'typebox';
import { requireActor } from '../../http/auth.ts';
import { AppError, BadRequest } from '../../http/errors.ts';
import { errors, Ok } from '../../http/schemas.ts';
import { multipartRoutes } from '../../http/multipart.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import { openSse, pipeSse } from '../../http/sse.ts';
import { byteRange, CHUNK_SIZE, DIRECT_UPLOAD_LIMIT } from './notes.rules.ts';
import * as S from './notes.schemas.ts';
import type { NoteChat } from './notes.chat.ts';
import type { NotesService } from './notes.service.ts';

const LIMITS =
  'Size limits: video 2 GB, audio 500 MB, PDF 100 MB, DOCX 50 MB, TXT and Markdown 20 MB, images 20 MB; one multipart request carries at most 100 MB (larger files: chunk-init and chunks).';

export function notesRoutes(app: TypedApp, { notes, noteChat }: { notes: NotesService; noteChat: NoteChat }): void {
  const tags = ['notes'];
  const base = '/api/crm/projects/:name/notes';

  app.get(
    base,
    {
      schema: {
        tags,
        summary: "The project's research notes, newest first, with their source counts",
        params: S.ProjectParam,
        response: { 200: S.NoteList, ...errors(401, 403, 404) },
      },
    },
    async (req) => notes.list(requireActor(req), req.params.name),
  );
  app.post(
    base,
    {
      schema: {
        tags,
        summary: 'Create a research note',
        params: S.ProjectParam,
        body: S.CreateBody,
        response: { 201: S.Created, ...errors(400, 401, 403, 404) },
      },
    },
    async (req, reply) => reply.status(201).send(await notes.create(requireActor(req), req.params.name, req.body)),
  );
  app.get(
    `${base}/:id`,
    {
      schema: {
        tags,
        summary: 'A note with its sources, issue links and chat',
        params: S.NoteParams,
        response: { 200: S.NoteDetail, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => notes.get(requireActor(req), req.params.name, req.params.id),
  );
  app.delete(
    `${base}/:id`,
    {
      schema: {
        tags,
        summary: 'Delete a note with its sources, files, embeddings, chat and issue links',
        params: S.NoteParams,
        response: { 200: Ok, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => notes.remove(requireActor(req), req.params.name, req.params.id),
  );

  multipartRoutes(app, (scope) =>
    scope.post(
      `${base}/:id/sources`,
      {
        schema: {
          tags,
          summary: 'Add a source: a file (multipart), a web page or YouTube video (JSON url), or a project file',
          description: `Multipart: field \`file\` (+ optional \`title\`). JSON: \`{source_type:'youtube'|'web', url, title?}\` (http or https; private, loopback and link-local addresses are refused when fetched), or \`{file_path, title?}\` naming a file in the project's working directory (copied into the note; 403 outside it). Accepted files: video (mp4, mov, mkv, webm, avi, m4v), audio (mp3, wav, m4a, ogg, oga, opus, flac, aac), PDF, DOCX, TXT, Markdown (md), images (png, jpg, gif, webp). ${LIMITS} Processing is asynchronous: follow it on the progress stream.`,
          params: S.NoteParams,
          consumes: ['application/json', 'multipart/form-data'],
          body: S.SourceBody,
          multipart: S.SourceMultipart,
          response: { 201: S.Queued, ...errors(400, 401, 403, 404, 413, 507) },
        },
      },
      async (req, reply) => {
        const actor = requireActor(req);
        const { name, id } = req.params;
        let out;
        if (req.isMultipart())
          out = await notes.addFile(actor, name, id, () =>
            req.parts({ limits: { fileSize: DIRECT_UPLOAD_LIMIT, files: 1, fields: 5 } }),
          );
        else if (req.body && 'file_path' in req.body) out = await notes.addPath(actor, name, id, req.body);
        else if (req.body && 'url' in req.body) out = await notes.addUrl(actor, name, id, req.body);
        else throw new BadRequest('invalid_request', 'Send a multipart file, {source_type, url} or {file_path}.');
        return reply.status(201).send(out);
      },
    ),
  );
  app.post(
    `${base}/:id/sources/chunk-init`,
    {
      schema: {
        tags,
        summary: 'Start a chunked upload of a large source file',
        description: `Type and size are checked here. Chunks of ${CHUNK_SIZE} bytes follow; at most 10 uploads per user at once (429); a session idle for 30 minutes expires with its bytes. ${LIMITS}`,
        params: S.NoteParams,
        body: S.ChunkInitBody,
        response: { 201: S.ChunkInit, ...errors(400, 401, 403, 404, 413, 429, 507) },
      },
    },
    async (req, reply) =>
      reply.status(201).send(await notes.chunkInit(requireActor(req), req.params.name, req.params.id, req.body)),
  );

  // Chunks arrive as raw bytes: this context alone streams `application/octet-stream` bodies to the service.
  app.register(async (scope) => {
    const sub = scope as unknown as TypedApp;
    sub.addContentTypeParser('application/octet-stream', (_req, payload, done) => done(null, payload));
    sub.post(
      `${base}/:id/sources/chunks/:uploadId`,
      {
        schema: {
          tags,
          summary: 'Send one chunk of a chunked upload (raw bytes, X-Chunk-Index strictly sequential)',
          description:
            'Body: `application/octet-stream`, at most `chunk_size` bytes. 200 `{received_bytes}` per chunk; 201 `{done:true, source_id, status}` on the last; 409 when the index is not the next one.',
          params: S.UploadParams,
          headers: S.ChunkHeaders,
          consumes: ['application/octet-stream'],
          response: {
            200: S.ChunkReceived,
            201: S.ChunkDone,
            ...errors(400, 401, 403, 404, 409, 413, 415, 507),
          },
        },
      },
      async (req, reply) => {
        const out = await notes.chunk(
          requireActor(req),
          req.params.name,
          req.params.id,
          req.params.uploadId,
          Number(req.headers['x-chunk-index']),
          req.body as unknown as Readable,
        );
        return reply.status('done' in out ? 201 : 200).send(out);
      },
    );
  });

  app.patch(
    `${base}/:id/sources/:sourceId`,
    {
      schema: {
        tags,
        summary: 'Rename a source (empty or null: back to the default name)',
        params: S.SourceParams,
        body: S.RenameBody,
        response: { 200: Type.Object({}), ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => notes.rename(requireActor(req), req.params.name, req.params.id, req.params.sourceId, req.body.title),
  );
  app.delete(
    `${base}/:id/sources/:sourceId`,
    {
      schema: {
        tags,
        summary: 'Remove a source with its file, text and embeddings',
        params: S.SourceParams,
        response: { 200: Ok, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => notes.removeSource(requireActor(req), req.params.name, req.params.id, req.params.sourceId),
  );
  app.get(
    `${base}/:id/sources/:sourceId/file`,
    {
      schema: {
        tags,
        summary: 'The file of a PDF, audio or video source (to open a citation at its page or second)',
        description:
          'The stored bytes as they were uploaded, with their media type (`application/pdf`, `audio/*`, `video/*`), `content-disposition: inline`. A `Range: bytes=a-b` request is answered 206 with that part (players seek). Other kinds of source, and sources without a file, answer 404 `no_file`.',
        params: S.SourceParams,
        response: {
          200: Type.Unsafe<NodeJS.ReadableStream>({ type: 'string', format: 'binary', description: 'the file' }),
          206: Type.Unsafe<NodeJS.ReadableStream>({
            type: 'string',
            format: 'binary',
            description: 'the requested range of the file',
          }),
          ...errors(400, 401, 403, 404, 416),
        },
      },
    },
    async (req, reply) => {
      const f = await notes.sourceFile(requireActor(req), req.params.name, req.params.id, req.params.sourceId);
      reply
        .header('content-type', f.type)
        .header('x-content-type-options', 'nosniff')
        .header('accept-ranges', 'bytes')
        .header('cache-control', 'private, no-store')
        .header('content-disposition', `inline; filename*=UTF-8''${encodeURIComponent(f.filename)}`);
      const range = byteRange(req.headers.range, f.size);
      if (range === 'invalid') {
        reply.header('content-range', `bytes */${f.size}`);
        throw new AppError(416, 'range_not_satisfiable', 'The requested range is outside the file.');
      }
      if (range) {
        return reply
          .code(206)
          .header('content-range', `bytes ${range.start}-${range.end}/${f.size}`)
          .header('content-length', range.end - range.start + 1)
          .send(fs.createReadStream(f.file, { start: range.start, end: range.end }));
      }
      return reply.header('content-length', f.size).send(fs.createReadStream(f.file));
    },
  );
  app.get(
    `${base}/:id/sources/:sourceId/progress`,
    {
      config: { queryToken: true },
      schema: {
        tags,
        summary: "A source's processing progress as server-sent events",
        description:
          'Events `progress` `{status:"processing"|"done"|"error", message}`, one per change; the stream ends at done or error (the message then holds the reason).',
        params: S.SourceParams,
        produces: ['text/event-stream'],
        response: { 200: Type.String({ description: 'text/event-stream' }), ...errors(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const { events } = await notes.progress(requireActor(req), req.params.name, req.params.id, req.params.sourceId);
      reply.hijack();
      openSse(reply.raw, reply.getHeaders());
      await pipeSse(reply.raw, events, { heartbeatMs: 15_000 });
    },
  );
  app.post(
    `${base}/:id/chat`,
    {
      schema: {
        tags,
        summary: "Chat grounded in the note's sources; the reply streams as server-sent events",
        description:
          'Events: `text_delta` `{delta}`, `tool_result` `{tool:"create_issue", issue_id, title, priority}` (the issue is created and linked to the note), `citations` `{citations:[{marker, source_id, chunk_id, location, quote}]}` (see NoteCitation), `done` `{message_id, usage, sources}`; `error` `{error, message}` before `citations` and `done` when the model fails midway. Context: vector search over the selected sources (default: all), else their text cut at 80,000 characters; each passage is labelled S1, S2, … with its place (page, timecode, heading), and answers cite passages as [S1 p. 12], [S2 00:14:05] or [S3 § Setup › Database]. The citations event lists each label the answer uses that names a passage of the context (an invented label is dropped), with the passage\'s source, chunk, location and a quoted span of its text.',
        params: S.NoteParams,
        body: S.ChatBody,
        produces: ['text/event-stream'],
        response: {
          200: Type.String({ description: 'text/event-stream' }),
          ...errors(400, 401, 403, 404, 429, 503),
        },
      },
    },
    async (req, reply) => {
      const { events } = await noteChat.chat(requireActor(req), req.params.name, req.params.id, req.body);
      reply.hijack();
      openSse(reply.raw, reply.getHeaders());
      await pipeSse(reply.raw, events, { heartbeatMs: 15_000 });
    },
  );
}
