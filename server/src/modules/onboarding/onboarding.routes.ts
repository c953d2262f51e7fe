/** Routes of onboarding, trial status and usage (docs/api.md, The main resources). */
import { Type } from 'typebox';
import { requireActor } from '../../http/auth.ts';
import { errors, FilePart, Nullable } from '../../http/schemas.ts';
import { multipartRoutes } from '../../http/multipart.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import { Project } from '../projects/projects.schemas.ts';
import { Worker } from '../workers/workers.schemas.ts';
import { Progress, SetupConfig, UsageRow, Video, Videos } from './onboarding.schemas.ts';
import type { OnboardingService } from './onboarding.service.ts';
import { readSetupUpload } from './setup-upload.ts';

export function onboardingRoutes(app: TypedApp, { onboarding }: { onboarding: OnboardingService }): void {
  const tags = ['onboarding'];

  multipartRoutes(app, (scope) =>
    scope.post(
      '/api/crm/onboarding/setup',
      {
        schema: {
          tags,
          summary:
            'Create the first project and its workers (multipart `config` JSON + `files`); trial without an LLM key',
          consumes: ['multipart/form-data'],
          multipart: Type.Object({
            config: Type.String({
              contentMediaType: 'application/json',
              contentSchema: SetupConfig,
              description:
                'JSON {displayName, projectName, niche?, teamPreset?, llmKey?, workers?}; without llmKey a verified user gets the trial',
            }),
            files: Type.Optional(
              Type.Array(FilePart('a file for the project directory (a part per file)'), {
                description: 'files copied into the new project directory under safe names',
              }),
            ),
          }),
          response: {
            200: Type.Object({
              ok: Type.Boolean(),
              project: Project,
              trial_activated: Type.Boolean(),
              workers: Type.Array(Worker),
              files: Type.Array(Type.String()),
            }),
            ...errors(400, 401, 402, 409, 413),
          },
        },
      },
      async (req) => onboarding.setup(requireActor(req), (tmpRoot) => readSetupUpload(req, tmpRoot)),
    ),
  );
  app.get(
    '/api/crm/account/trial-status',
    {
      schema: {
        tags: ['account'],
        summary: 'Trial status',
        response: {
          200: Type.Object({
            email: Type.String(),
            email_verified: Type.Boolean(),
            trial_granted: Type.Boolean(),
            has_trial_active: Type.Boolean(),
            total_remaining: Type.Integer(),
            total_granted: Type.Integer(),
            projects: Type.Array(
              Type.Object({
                name: Type.String(),
                display_name: Type.String(),
                trial_mode: Type.Boolean(),
                uses_platform_key: Type.Boolean(),
                tokens_used: Type.Integer(),
              }),
            ),
          }),
          ...errors(401),
        },
      },
    },
    async (req) => onboarding.trialStatus(requireActor(req)),
  );
  app.get(
    '/api/crm/account/usage',
    {
      schema: {
        tags: ['account'],
        summary: 'Token usage (newest 200 rows and totals) and storage used against the quota',
        response: {
          200: Type.Object({
            rows: Type.Array(UsageRow),
            totals: Type.Object({ total: Type.Integer(), input: Type.Integer(), output: Type.Integer() }),
            storage: Type.Object(
              {
                used_bytes: Type.Integer({
                  description:
                    'bytes the account holds: project files, note sources, transcripts, wiki pages and the cloud home (measured at most a minute ago, plus the writes since)',
                }),
                quota_bytes: Nullable(Type.Integer({ description: 'the plan’s storage quota in bytes; null: none' })),
                plan: Type.String(),
                quotas: Type.Record(Type.String(), Nullable(Type.Integer()), {
                  description: 'every plan’s storage quota in bytes (null: none)',
                }),
              },
              { description: 'storage quota (docs/api.md, Storage quotas)' },
            ),
          }),
          ...errors(401),
        },
      },
    },
    async (req) => onboarding.usage(requireActor(req)),
  );
  app.get(
    '/api/crm/onboarding/progress',
    {
      schema: {
        tags,
        summary: 'Checklist progress (nothing stored for an untouched user)',
        response: { 200: Progress, ...errors(401) },
      },
    },
    async (req) => onboarding.progress(requireActor(req)),
  );
  app.post(
    '/api/crm/onboarding/event',
    {
      schema: {
        tags,
        summary: 'Mark a step completed or skipped',
        body: Type.Object({
          step: Type.String({ maxLength: 50 }),
          status: Type.String({ maxLength: 50 }),
          source: Type.Optional(Type.Union([Type.Literal('web'), Type.Literal('cli')])),
        }),
        response: { 200: Progress, ...errors(400, 401) },
      },
    },
    async (req) => onboarding.event(requireActor(req), req.body),
  );
  app.post(
    '/api/crm/onboarding/dismiss',
    { schema: { tags, summary: 'Dismiss the checklist (idempotent)', response: { 200: Progress, ...errors(401) } } },
    async (req) => onboarding.dismiss(requireActor(req)),
  );
  app.post(
    '/api/crm/onboarding/replay',
    { schema: { tags, summary: 'Clear the dismissal', response: { 200: Progress, ...errors(401) } } },
    async (req) => onboarding.replay(requireActor(req)),
  );
  app.post(
    '/api/crm/onboarding/reset',
    {
      schema: {
        tags,
        summary: 'Wipe progress and the heard-source field (projects stay)',
        response: { 200: Type.Object({ ok: Type.Boolean() }), ...errors(401) },
      },
    },
    async (req) => onboarding.reset(requireActor(req)),
  );
  app.get(
    '/api/crm/onboarding/videos',
    { schema: { tags, summary: 'Video slots over the built-in defaults', response: { 200: Videos, ...errors(401) } } },
    async () => onboarding.videos(),
  );
  app.put(
    '/api/crm/onboarding/videos',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Set video slots (admin; known slots only, sanitized)',
        body: Type.Object({ videos: Type.Record(Type.String(), Type.Unknown()) }),
        response: {
          200: Type.Object({ ok: Type.Boolean(), videos: Type.Record(Type.String(), Video) }),
          ...errors(400, 401, 403),
        },
      },
    },
    async (req) => onboarding.putVideos(requireActor(req), req.body.videos),
  );
}
