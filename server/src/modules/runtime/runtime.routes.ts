/**
 * Routes of the worker runtime: messages to workers, runs (list, show, cancel, retry), restart, prompt
 * generation. The job handler is registered by runtime.jobs.ts; the crash sweep is the service's start step.
 */
import { requireActor } from '../../http/auth.ts';
import { errors } from '../../http/schemas.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import type { RuntimeService } from './runtime.service.ts';
import * as S from './runtime.schemas.ts';

export function runtimeRoutes(app: TypedApp, { runtime }: { runtime: RuntimeService }): void {
  const tags = ['workers'];

  app.post(
    '/api/crm/projects/:name/message',
    {
      schema: {
        tags,
        summary: 'Send a message to one worker or several in parallel; each gets an agent run',
        description:
          'A stopped worker starts automatically. 429 token_budget_exceeded when a worker used its daily (or trial) token budget.',
        params: S.NameParam,
        body: S.MessageBody,
        response: { 202: S.MessageAnswer, ...errors(400, 401, 403, 404, 429, 503) },
      },
    },
    async (req, reply) => reply.status(202).send(await runtime.submit(requireActor(req), req.params.name, req.body)),
  );
  app.get(
    '/api/crm/projects/:name/runs',
    {
      schema: {
        tags,
        summary: "The project's agent runs, newest first, paged",
        description:
          'Paged by run id: `limit` (default 50, at most 200) and `before` (the `next_before` of the previous page). Optional filters `worker_id` and `status`.',
        params: S.NameParam,
        querystring: S.RunsQuery,
        response: { 200: S.RunList, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => runtime.listRuns(requireActor(req), req.params.name, req.query),
  );
  app.get(
    '/api/crm/projects/:name/runs/:id',
    {
      schema: {
        tags,
        summary: 'One agent run: status, reply, tool calls, usage and timings',
        params: S.RunParams,
        response: { 200: S.Run, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => runtime.getRun(requireActor(req), req.params.name, req.params.id),
  );
  app.post(
    '/api/crm/projects/:name/runs/:id/cancel',
    {
      schema: {
        tags,
        summary: 'Cancel a queued or running run',
        params: S.RunParams,
        response: { 200: S.Run, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req) => runtime.cancel(requireActor(req), req.params.name, req.params.id),
  );
  app.post(
    '/api/crm/projects/:name/runs/:id/retry',
    {
      schema: {
        tags,
        summary: 'Run a failed or cancelled run again (a new run)',
        params: S.RunParams,
        response: { 202: S.RetryAnswer, ...errors(400, 401, 403, 404, 409, 429, 503) },
      },
    },
    async (req, reply) =>
      reply.status(202).send(await runtime.retry(requireActor(req), req.params.name, req.params.id)),
  );
  app.post(
    '/api/crm/projects/:name/restart',
    {
      schema: {
        tags,
        summary: "Stop a worker's runs cleanly (all workers' without worker_id)",
        params: S.NameParam,
        querystring: S.RestartQuery,
        response: { 200: S.RestartAnswer, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => runtime.restart(requireActor(req), req.params.name, req.query.worker_id),
  );
}
