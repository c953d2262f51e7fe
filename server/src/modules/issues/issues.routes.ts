/**
 * Issue routes: the web UI's (`/api/crm/projects/:name/issues…`) and the workers' (`/api/mcp/issues/…`;
 * docs/ARCHITECTURE.md, Issues, skills, wiki, files, pins, learnings). Each route translates HTTP to one service call.
 */
import { requireActor } from '../../http/auth.ts';
import { errors } from '../../http/schemas.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import type { IssuesService } from './issues.service.ts';
import * as S from './issues.schemas.ts';

export function issuesRoutes(app: TypedApp, { issues }: { issues: IssuesService }): void {
  const tags = ['issues'];
  const base = '/api/crm/projects/:name/issues';

  app.get(
    base,
    {
      schema: {
        tags,
        summary: 'List issues (newest first), filtered by status and assignee, paged',
        params: S.ProjectParam,
        querystring: S.ListQuery,
        response: { 200: S.IssueList, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => issues.list(requireActor(req), req.params.name, req.query),
  );
  app.post(
    base,
    {
      schema: {
        tags,
        summary: 'Create an issue',
        params: S.ProjectParam,
        body: S.CreateBody,
        response: { 201: S.Issue, ...errors(400, 401, 403, 404) },
      },
    },
    async (req, reply) => reply.status(201).send(await issues.create(requireActor(req), req.params.name, req.body)),
  );
  app.get(
    `${base}/:id`,
    {
      schema: {
        tags,
        summary: 'Read an issue with its activity',
        params: S.IssueParams,
        response: { 200: S.Issue, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => issues.get(requireActor(req), req.params.name, req.params.id),
  );
  app.put(
    `${base}/:id`,
    {
      schema: {
        tags,
        summary: 'Update an issue (in_progress with an assignee takes it)',
        params: S.IssueParams,
        body: S.UpdateBody,
        response: { 200: S.Issue, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => issues.update(requireActor(req), req.params.name, req.params.id, req.body),
  );
  app.post(
    `${base}/:id/log`,
    {
      schema: {
        tags,
        summary: 'Append an activity entry (ts ISO-8601, future clamped to now)',
        params: S.IssueParams,
        body: S.LogBody,
        response: { 200: S.Issue, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => (await issues.log(requireActor(req), req.params.name, req.params.id, req.body)).issue,
  );

  const mcpTags = ['issues', 'workers'];
  app.put(
    '/api/mcp/issues/:project/:id',
    {
      schema: {
        tags: mcpTags,
        summary: "Workers' issue update: one of the five statuses and/or the assignee",
        params: S.McpParams,
        body: S.McpUpdateBody,
        response: { 200: S.Issue, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => issues.mcpUpdate(requireActor(req), req.params.project, req.params.id, req.body),
  );
  app.post(
    '/api/mcp/issues/:project/:id/log',
    {
      schema: {
        tags: mcpTags,
        summary: "Workers' issue log entry (ts ISO-8601; future clamped to now; invalid 400)",
        params: S.McpParams,
        body: S.LogBody,
        response: { 200: S.McpLogAnswer, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => ({
      ok: true,
      entry: (await issues.log(requireActor(req), req.params.project, req.params.id, req.body)).entry,
    }),
  );
}
