/**
 * Issue routes: the web UI's (CONTRACT.md §1) and the workers' (`/api/mcp/issues/…`, specification
 * "Issue updates for workers"). Each route translates HTTP to one service call.
 */
import type { Module } from '../../app.ts';
import { requireActor } from '../../http/auth.ts';
import { errors } from '../../http/schemas.ts';
import { createIssuesService } from './issues.service.ts';
import * as S from './issues.schemas.ts';
import { KNOWLEDGE_INDEX_JOB } from '../../lib/doc-sources.ts';
import { BadRequest } from '../../http/errors.ts';
import type { IssuePriority, IssueStatus } from '../../db/types.ts';

export const issuesModule: Module = async (app, deps) => {
  const issues = createIssuesService({
    db: deps.db,
    access: deps.access,
    activity: deps.activity,
    jobs: deps.jobs,
    log: app.log,
  });
  deps.docSources.register('issue', issues.loadDocument);
  deps.jobs.declare(KNOWLEDGE_INDEX_JOB);
  // The agent's issue tools act through this service with the project owner's authority.
  const summary = (i: {
    id: number;
    title: string;
    status: IssueStatus;
    assignee: string | null;
    priority: string | null;
  }) => ({ id: i.id, title: i.title, status: i.status, assignee: i.assignee, priority: i.priority });
  const priority = (p?: string): IssuePriority | undefined => {
    if (p === undefined || p === '') return undefined;
    const up = p.toUpperCase();
    if (!/^P[0-3]$/.test(up)) throw new BadRequest('invalid_priority', 'Priority must be one of P0, P1, P2, P3.');
    return up as IssuePriority;
  };
  deps.agentPorts.issues = {
    async create(p) {
      const { actor, projectName } = await deps.access.ownerActor(p.projectId);
      return summary(
        await issues.create(actor, projectName, {
          title: p.title,
          description: p.description,
          priority: priority(p.priority),
        }),
      );
    },
    async take(p) {
      const { actor, projectName } = await deps.access.ownerActor(p.projectId);
      return summary(
        await issues.mcpUpdate(actor, projectName, p.issueId, {
          status: 'in_progress',
          assignee: p.assignee,
          author: p.assignee,
        }),
      );
    },
    async update(p) {
      const { actor, projectName } = await deps.access.ownerActor(p.projectId);
      return summary(
        await issues.update(actor, projectName, p.issueId, {
          status: p.status,
          assignee: p.assignee,
          title: p.title,
          priority: priority(p.priority),
          description: p.description,
        }),
      );
    },
    async log(p) {
      const { actor, projectName } = await deps.access.ownerActor(p.projectId);
      await issues.log(actor, projectName, p.issueId, { message: p.message, author: p.author });
      return { ok: true };
    },
  };
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
};
