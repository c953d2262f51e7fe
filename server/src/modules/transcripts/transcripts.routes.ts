/** Meeting transcript routes (owner of the project or an admin). One service call each. */
import { Type } from 'typebox';
import { requireActor } from '../../http/auth.ts';
import { errors, projectIdParams, ProjectParam } from '../../http/schemas.ts';
import { multipartRoutes } from '../../http/multipart.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import { openSse, pipeSse } from '../../http/sse.ts';
import {
  Detail,
  JobParams,
  List,
  ListQuery,
  Queued,
  Status,
  TokenQuery,
  UploadMultipart,
} from './transcripts.schemas.ts';
import type { TranscriptsService } from './transcripts.service.ts';

export function transcriptsRoutes(app: TypedApp, { transcripts }: { transcripts: TranscriptsService }): void {
  const tags = ['transcripts'];
  const p = '/api/crm/projects/:name/transcripts';

  multipartRoutes(app, (scope) =>
    scope.post(
      `${p}/upload`,
      {
        schema: {
          tags,
          summary: 'Upload a meeting recording for transcription, summary and embedding',
          description:
            'Multipart `file` (audio mp3, wav, m4a, aac, ogg, opus, flac; video mp4, mov, webm, mkv; up to 1 GB, streamed to disk), `filename` (required; its extension must match the type) and `embed_to_rag` (true or false, default true). The pipeline runs as a durable job, one transcript at a time: follow it with the progress stream.',
          params: ProjectParam,
          consumes: ['multipart/form-data'],
          multipart: UploadMultipart,
          response: { 202: Queued, ...errors(400, 401, 403, 404, 413, 500, 503, 507) },
        },
      },
      async (req, reply) => {
        const out = await transcripts.upload(requireActor(req), req.params.name, () =>
          req.parts({ limits: { fileSize: transcripts.uploadLimitBytes, files: 1 } }),
        );
        return reply.status(202).send(out);
      },
    ),
  );
  app.get(
    p,
    {
      schema: {
        tags,
        summary: "A project's transcripts, newest first",
        params: ProjectParam,
        querystring: ListQuery,
        response: { 200: List, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => transcripts.list(requireActor(req), req.params.name, req.query),
  );
  app.get(
    `${p}/:id`,
    {
      schema: {
        tags,
        summary: 'One transcript: text, summary and frames',
        params: projectIdParams('the transcript id'),
        response: { 200: Detail, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => transcripts.get(requireActor(req), req.params.name, req.params.id),
  );
  app.post(
    `${p}/:id/retry-summary`,
    {
      schema: {
        tags,
        summary: 'Retry the summary of a transcript whose summary failed',
        description:
          'Allowed while the transcript rests in transcribed (audio) or frames_extracted (video) after a failed summary; the pipeline summarizes it again, then embeds it.',
        params: projectIdParams('the transcript id'),
        response: {
          202: Type.Object({ transcript_id: Type.Integer(), job_id: Type.String(), status: Status }),
          ...errors(400, 401, 403, 404, 409),
        },
      },
    },
    async (req, reply) =>
      reply.status(202).send(await transcripts.retrySummary(requireActor(req), req.params.name, req.params.id)),
  );
  app.get(
    `${p}/job/:jobId/progress`,
    {
      config: { queryToken: true },
      schema: {
        tags,
        summary: 'Progress of a transcript job (server-sent events)',
        description:
          'The current state at once, then `event: progress` `{status, progress_pct, step_label, error}` on every change, a comment heartbeat every second, and `event: end` (same fields) at done or failed. The token may be passed as `?token=`.',
        params: JobParams,
        querystring: TokenQuery,
        produces: ['text/event-stream'],
        response: { 200: Type.String({ description: 'text/event-stream' }), ...errors(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const { events } = await transcripts.progress(requireActor(req), req.params.name, req.params.jobId);
      reply.hijack();
      openSse(reply.raw, reply.getHeaders());
      await pipeSse(reply.raw, events, { heartbeatMs: 1000 });
    },
  );
}
