/**
 * Routes of the workers area (docs/ARCHITECTURE.md, Projects, workers, plan limits and onboarding). Each route
 * translates HTTP to one service call.
 */
import { Type } from 'typebox';
import { multipartRoutes } from '../../http/multipart.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import { requireActor } from '../../http/auth.ts';
import { errors, idParam, ImageUploadBody, Nullable, Ok } from '../../http/schemas.ts';
import { Binary, NameParam, UploadAnswer } from '../projects/projects.schemas.ts';
import type { WorkersService } from './workers.service.ts';
import { readImageUpload } from './upload.ts';
import * as S from './workers.schemas.ts';

/** Avatars (docs/ARCHITECTURE.md, Projects, workers, plan limits and onboarding) and worker icons: 2 MB. */
const IMAGE_MAX_BYTES = 2 * 1024 * 1024;

export function workersRoutes(app: TypedApp, { workers }: { workers: WorkersService }): void {
  const tags = ['workers'];
  const W = '/api/crm/projects/:name/workers';
  const P = S.ProjectWorkerParams;

  app.get(
    '/api/crm/workers',
    {
      schema: {
        tags,
        summary: "The caller's workers across projects (the operator: all users')",
        response: { 200: Type.Object({ workers: Type.Array(S.WorkerListItem) }), ...errors(401) },
      },
    },
    async (req) => workers.listAll(requireActor(req)),
  );
  app.get(
    '/api/crm/workers/presets',
    {
      schema: {
        tags,
        summary: 'The preset library',
        response: { 200: Type.Object({ presets: Type.Array(S.Preset) }), ...errors(401) },
      },
    },
    async () => workers.presets(),
  );
  app.get(
    '/api/crm/model-tiers',
    {
      schema: {
        tags,
        summary: 'Model tiers, role defaults and the fallback tier',
        response: { 200: S.ModelTiers, ...errors(401) },
      },
    },
    async () => workers.modelTiers(),
  );
  app.post(
    `${W}/generate-prompt`,
    {
      schema: {
        tags,
        summary: 'Generate a system prompt with the LLM from what the worker is for, its name and a description',
        params: NameParam,
        body: S.GeneratePromptBody,
        response: { 200: S.GeneratePromptAnswer, ...errors(400, 401, 403, 404, 429, 502, 503) },
      },
    },
    async (req) => workers.generatePrompt(requireActor(req), req.params.name, req.body),
  );
  app.get(
    '/api/crm/workers/templates',
    {
      schema: {
        tags,
        summary: 'Own and public worker templates',
        response: { 200: Type.Object({ templates: Type.Array(S.Template) }), ...errors(401) },
      },
    },
    async (req) => workers.listTemplates(requireActor(req)),
  );
  app.post(
    '/api/crm/workers/templates',
    {
      schema: {
        tags,
        summary: 'Save a worker template',
        body: S.TemplateBody,
        response: { 200: Type.Object({ ok: Type.Boolean(), id: Type.Integer() }), ...errors(400, 401) },
      },
    },
    async (req) => workers.createTemplate(requireActor(req), req.body),
  );
  app.delete(
    '/api/crm/workers/templates/:id',
    {
      schema: {
        tags,
        summary: 'Delete a template (owner only)',
        params: idParam('the template id'),
        response: { 200: Ok, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => workers.deleteTemplate(requireActor(req), req.params.id),
  );

  app.get(
    W,
    {
      schema: {
        tags,
        summary: "The project's workers in order",
        params: NameParam,
        response: { 200: Type.Object({ workers: Type.Array(S.Worker) }), ...errors(401, 403, 404) },
      },
    },
    async (req) => workers.list(requireActor(req), req.params.name),
  );
  app.post(
    W,
    {
      schema: {
        tags,
        summary: 'Create a worker (fields or a preset); 402 at the worker limit',
        params: NameParam,
        body: S.WorkerCreateBody,
        response: { 201: S.Worker, ...errors(400, 401, 402, 403, 404) },
      },
    },
    async (req, reply) => reply.status(201).send(await workers.create(requireActor(req), req.params.name, req.body)),
  );
  app.post(
    `${W}/reorder`,
    {
      schema: {
        tags,
        summary: 'Reorder; workers missing from the list are appended',
        params: NameParam,
        body: S.ReorderBody,
        response: {
          200: Type.Object({ ok: Type.Boolean(), count: Type.Integer(), order: Type.Array(Type.Integer()) }),
          ...errors(400, 401, 403, 404),
        },
      },
    },
    async (req) => workers.reorder(requireActor(req), req.params.name, req.body.order),
  );
  app.put(
    `${W}/:id`,
    {
      schema: {
        tags,
        summary: 'Update worker fields',
        params: P,
        body: S.WorkerUpdateBody,
        response: { 200: S.Worker, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => workers.update(requireActor(req), req.params.name, req.params.id, req.body),
  );
  app.delete(
    `${W}/:id`,
    {
      schema: {
        tags,
        summary: 'Delete a worker',
        params: P,
        response: { 200: Type.Object({ ok: Type.Boolean(), id: Type.Integer() }), ...errors(401, 403, 404) },
      },
    },
    async (req) => workers.remove(requireActor(req), req.params.name, req.params.id),
  );

  for (const which of ['icon', 'avatar'] as const) {
    const allowed = which === 'icon' ? (['png', 'gif'] as const) : (['jpeg', 'png', 'webp'] as const);
    multipartRoutes(app, (scope) =>
      scope.post(
        `${W}/:id/${which === 'icon' ? 'upload-icon' : 'avatar'}`,
        {
          schema: {
            tags,
            summary: `Upload the worker ${which} (multipart \`file\`, ${allowed.join('/').toUpperCase()}, 2 MB, checked by content)`,
            params: P,
            consumes: ['multipart/form-data'],
            multipart: ImageUploadBody(allowed, IMAGE_MAX_BYTES),
            response: { 200: UploadAnswer, ...errors(400, 401, 403, 404, 413) },
          },
        },
        async (req) => {
          return workers.setImage(requireActor(req), req.params.name, req.params.id, which, () =>
            readImageUpload(req, IMAGE_MAX_BYTES, [...allowed]),
          );
        },
      ),
    );
    app.get(
      `${W}/:id/${which}`,
      {
        schema: {
          tags,
          summary: `The worker ${which} (binary); 404 when none`,
          params: P,
          response: { 200: Binary, ...errors(401, 403, 404) },
        },
      },
      async (req, reply) => {
        const img = await workers.getImage(requireActor(req), req.params.name, req.params.id, which);
        return reply.type(img.mime).header('cache-control', 'private, max-age=60').send(img.data);
      },
    );
  }
  app.delete(
    `${W}/:id/avatar`,
    {
      schema: {
        tags,
        summary: 'Delete the avatar; avatar_pack back to role',
        params: P,
        response: { 200: Type.Object({ ok: Type.Boolean(), avatar_pack: Type.String() }), ...errors(401, 403, 404) },
      },
    },
    async (req) => workers.deleteAvatar(requireActor(req), req.params.name, req.params.id),
  );

  app.get(
    `${W}/:id/telegram-token`,
    {
      schema: {
        tags,
        summary: 'The bound messenger bot (token masked)',
        params: P,
        response: {
          200: Type.Object({
            bound: Type.Boolean(),
            token_masked: Nullable(Type.String()),
            bot_username: Nullable(Type.String()),
          }),
          ...errors(401, 403, 404),
        },
      },
    },
    async (req) => workers.getBot(requireActor(req), req.params.name, req.params.id),
  );
  app.post(
    `${W}/:id/telegram-token`,
    {
      schema: {
        tags,
        summary: 'Bind a messenger bot token (validated with getMe); 409 when bound to another worker',
        params: P,
        body: S.TokenBody,
        response: {
          200: Type.Object({ ok: Type.Boolean(), started: Type.Boolean(), bot_username: Type.String() }),
          ...errors(400, 401, 403, 404, 409, 502),
        },
      },
    },
    async (req) => workers.bindBot(requireActor(req), req.params.name, req.params.id, req.body.token),
  );
  app.delete(
    `${W}/:id/telegram-token`,
    {
      schema: {
        tags,
        summary: 'Remove the bound bot token',
        params: P,
        response: { 200: Type.Object({ ok: Type.Boolean(), removed: Type.Boolean() }), ...errors(401, 403, 404) },
      },
    },
    async (req) => workers.unbindBot(requireActor(req), req.params.name, req.params.id),
  );
  app.post(
    `${W}/:id/notify`,
    {
      schema: {
        tags,
        summary: "Send a message through the worker's bot (no-op without one)",
        params: P,
        body: S.NotifyBody,
        response: {
          200: Type.Object({ ok: Type.Boolean(), sent: Type.Boolean() }),
          ...errors(400, 401, 403, 404, 502),
        },
      },
    },
    async (req) => workers.notify(requireActor(req), req.params.name, req.params.id, req.body),
  );
  app.post(
    `${W}/:id/suggest-bot-username`,
    {
      schema: {
        tags,
        summary: 'Five bot username candidates',
        params: P,
        response: { 200: Type.Object({ candidates: Type.Array(Type.String()) }), ...errors(401, 403, 404) },
      },
    },
    async (req) => workers.suggestBotUsername(requireActor(req), req.params.name, req.params.id),
  );
  app.get(
    `${W}/:id/activity`,
    {
      schema: {
        tags,
        summary: 'Last 50 activity events with daily token snapshots',
        params: P,
        response: { 200: Type.Object({ events: Type.Array(S.ActivityEvent) }), ...errors(401, 403, 404) },
      },
    },
    async (req) => workers.activity(requireActor(req), req.params.name, req.params.id),
  );
  app.get(
    `${W}/:id/runtime`,
    {
      schema: {
        tags,
        summary: 'Runtime status and token use today',
        params: P,
        response: { 200: S.Runtime, ...errors(401, 403, 404) },
      },
    },
    async (req) => workers.runtime(requireActor(req), req.params.name, req.params.id),
  );
}
