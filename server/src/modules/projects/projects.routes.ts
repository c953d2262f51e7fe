/**
 * Routes of the projects area (docs/ARCHITECTURE.md, Projects, workers, plan limits and onboarding). Each route
 * translates HTTP to one service call.
 */
import { Type } from 'typebox';
import { multipartRoutes } from '../../http/multipart.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import { requireActor } from '../../http/auth.ts';
import { errors, ImageUploadBody } from '../../http/schemas.ts';
import { readImageUpload } from '../workers/upload.ts';
import type { ProjectsService } from './projects.service.ts';
import * as S from './projects.schemas.ts';

const ICON_MAX_BYTES = 2 * 1024 * 1024;

export function projectsRoutes(app: TypedApp, { projects }: { projects: ProjectsService }): void {
  const tags = ['projects'];
  const B = '/api/crm/projects';

  app.get(
    B,
    {
      schema: {
        tags,
        summary: "The caller's projects",
        response: { 200: Type.Object({ projects: Type.Array(S.Project) }), ...errors(401) },
      },
    },
    async (req) => projects.list(requireActor(req)),
  );
  app.post(
    `${B}/create`,
    {
      schema: {
        tags,
        summary: 'Create a project (with the workers of teamPreset); 402 at the plan limit',
        body: S.CreateProjectBody,
        response: { 201: S.CreateAnswer, ...errors(400, 401, 402, 409) },
      },
    },
    async (req, reply) => reply.status(201).send(await projects.create(requireActor(req), req.body)),
  );
  app.post(
    `${B}/create-with-team`,
    {
      schema: {
        tags,
        summary: 'Create a project, its workers and an optional messenger bot atomically',
        body: S.CreateWithTeamBody,
        response: { 201: S.CreateWithTeamAnswer, ...errors(400, 401, 402, 409, 502) },
      },
    },
    async (req, reply) => reply.status(201).send(await projects.createWithTeam(requireActor(req), req.body)),
  );
  app.get(
    `${B}/suggest-preset`,
    {
      schema: {
        tags,
        summary: 'Team preset for a niche (keyword map)',
        querystring: Type.Object({
          niche: Type.String({ maxLength: 500, description: 'the project’s niche in a few words, e.g. online shop' }),
        }),
        response: { 200: Type.Object({ preset_id: Type.String() }), ...errors(400, 401) },
      },
    },
    async (req) => projects.suggestPreset(req.query.niche),
  );
  app.get(
    `${B}/:name`,
    {
      schema: {
        tags,
        summary: 'Project details',
        params: S.NameParam,
        response: { 200: S.Project, ...errors(401, 403, 404) },
      },
    },
    async (req) => projects.get(requireActor(req), req.params.name),
  );
  app.get(
    `${B}/:name/config`,
    {
      schema: {
        tags,
        summary: 'Project configuration: the model mode and the default approval rules of its workers',
        params: S.NameParam,
        response: { 200: S.ProjectConfig, ...errors(401, 403, 404) },
      },
    },
    async (req) => projects.getConfig(requireActor(req), req.params.name),
  );
  app.put(
    `${B}/:name/config`,
    {
      schema: {
        tags,
        summary: 'Set modelMode (strict | optimize) and/or the default approval rules',
        description:
          "`approvals`: `[{tool, mode, above?}]` (a tool name, a prefix ending in `*` or a class: `@commands`, `@writes`, `@deletions`, `@outbound`, `@tokens` with `above`; mode `always`, `once_per_run` or `never`), the rules of the project's workers that have none of their own; `[]` removes them. Owner or admin.",
        params: S.NameParam,
        body: S.ProjectConfigBody,
        response: { 200: S.ProjectConfig, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => projects.putConfig(requireActor(req), req.params.name, req.body),
  );
  app.get(
    `${B}/:name/protocol`,
    {
      schema: {
        tags,
        summary: "The project's rules text",
        params: S.NameParam,
        response: { 200: S.Protocol, ...errors(401, 403, 404) },
      },
    },
    async (req) => projects.getProtocol(requireActor(req), req.params.name),
  );
  app.put(
    `${B}/:name/protocol`,
    {
      schema: {
        tags,
        summary: "Replace the project's rules text",
        params: S.NameParam,
        body: S.ProtocolBody,
        response: { 200: S.Protocol, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => projects.putProtocol(requireActor(req), req.params.name, req.body.protocol),
  );
  app.get(
    `${B}/:name/logs`,
    {
      schema: {
        tags,
        summary:
          'Activity-log lines of a category (all, project, workers, issues, git, skills, sessions, tokens, chat, onboarding)',
        params: S.NameParam,
        querystring: S.LogsQuery,
        response: { 200: S.Logs, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => projects.logs(requireActor(req), req.params.name, req.query),
  );
  app.get(
    `${B}/:name/metrics`,
    {
      schema: {
        tags,
        summary: 'Events and tokens per day between since and until (UTC dates)',
        params: S.NameParam,
        querystring: S.MetricsQuery,
        response: { 200: S.Metrics, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => projects.metrics(requireActor(req), req.params.name, req.query),
  );
  multipartRoutes(app, (scope) =>
    scope.post(
      `${B}/:name/upload-icon`,
      {
        schema: {
          tags,
          summary: 'Upload the project icon (multipart `file`, PNG or GIF, 2 MB)',
          params: S.NameParam,
          consumes: ['multipart/form-data'],
          multipart: ImageUploadBody(['png', 'gif'], ICON_MAX_BYTES),
          response: { 200: S.UploadAnswer, ...errors(400, 401, 403, 404, 413) },
        },
      },
      async (req) => {
        return projects.setIcon(requireActor(req), req.params.name, () =>
          readImageUpload(req, ICON_MAX_BYTES, ['png', 'gif']),
        );
      },
    ),
  );
  app.get(
    `${B}/:name/icon`,
    {
      schema: {
        tags,
        summary: 'The project icon (binary)',
        params: S.NameParam,
        response: { 200: S.Binary, ...errors(401, 403, 404) },
      },
    },
    async (req, reply) => {
      const icon = await projects.getIcon(requireActor(req), req.params.name);
      return reply.type(icon.mime).header('cache-control', 'private, max-age=60').send(icon.data);
    },
  );
  app.post(
    `${B}/:name/active-issue`,
    {
      schema: {
        tags,
        summary: 'Bind the web session to an issue',
        params: S.NameParam,
        body: S.ActiveIssueBody,
        response: { 200: S.ActiveIssue, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => projects.bindActiveIssue(requireActor(req), req.params.name, req.body),
  );
  app.get(
    `${B}/:name/active-issue`,
    {
      schema: {
        tags,
        summary: 'The latest binding within 7 days, else nulls',
        params: S.NameParam,
        response: { 200: S.ActiveIssue, ...errors(401, 403, 404) },
      },
    },
    async (req) => projects.getActiveIssue(requireActor(req), req.params.name),
  );
}
