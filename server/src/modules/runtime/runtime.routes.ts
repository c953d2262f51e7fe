/**
 * Routes of the worker runtime: messages to workers, runs (show, cancel, retry), restart, prompt
 * generation. The job handler and the crash sweep are installed here too.
 */
import type { AppDeps, Module } from '../../app.ts';
import { requireActor } from '../../http/auth.ts';
import { errors } from '../../http/schemas.ts';
import { createRuntimeService, RUN_JOB, SWEEP_MS, type RuntimeService } from './runtime.service.ts';
import { createRunEvents } from './events.ts';
import * as S from './runtime.schemas.ts';

const services = new WeakMap<AppDeps, RuntimeService>();
/**
 * Runs executing at once in this process (job pollers, one run each). The queue's poller sleeps up to
 * its polling interval (0.5 s) between fetches even when jobs wait, so a burst drains at about
 * RUN_CONCURRENCY / 0.5 s runs per second at most; a local send wakes an idle poller at once.
 */
const RUN_CONCURRENCY = 16;

/** The one runtime service of an app (the runtime, chat and analytics modules share it). */
export function runtimeOf(deps: AppDeps, log: RuntimeDeps['log']): RuntimeService {
  let s = services.get(deps);
  if (!s) {
    s = createRuntimeService({ ...deps, events: createRunEvents(), log });
    services.set(deps, s);
  }
  return s;
}
type RuntimeDeps = Parameters<typeof createRuntimeService>[0];

export const runtimeModule: Module = async (app, deps) => {
  const runtime = runtimeOf(deps, app.log);
  const tags = ['workers'];
  deps.jobs.define<{ run_id: number }>(RUN_JOB, (data) => runtime.execute(data.run_id), {
    concurrency: RUN_CONCURRENCY,
    retryLimit: 2,
    retryDelay: 5,
    expireInSeconds: 3600,
    pollingIntervalSeconds: 0.5,
  });

  let sweep: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    const r = await runtime.reconcile();
    if (r.requeued.length || r.failed.length) app.log.warn(r, 'runs interrupted by a restart were reconciled');
    sweep = setInterval(
      () => void runtime.reconcile().catch((err) => app.log.error({ err: (err as Error).message }, 'run sweep failed')),
      SWEEP_MS,
    );
    sweep.unref();
  });
  app.addHook('onClose', async () => {
    if (sweep) clearInterval(sweep);
    runtime.abortAll();
  });

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
  app.post(
    '/api/crm/projects/:name/workers/generate-prompt',
    {
      schema: {
        tags,
        summary: 'Generate a system prompt from a role description with the LLM',
        params: S.NameParam,
        body: S.GeneratePromptBody,
        response: { 200: S.GeneratePromptAnswer, ...errors(400, 401, 403, 404, 502, 503) },
      },
    },
    async (req) => runtime.generatePrompt(requireActor(req), req.params.name, req.body),
  );
};
