/**
 * Skill routes (docs/ARCHITECTURE.md, Issues, skills, wiki, files, pins, learnings): global skills, project skills,
 * forks, evolution and skill updates. Global skills: any user reads and publishes; the publisher or an admin edits and
 * deletes. Each route makes one service call.
 */
import { requireActor } from '../../http/auth.ts';
import { errors } from '../../http/schemas.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import type { SkillsService } from './skills.service.ts';
import * as S from './skills.schemas.ts';

export function skillsRoutes(app: TypedApp, { skills }: { skills: SkillsService }): void {
  const tags = ['skills'];

  app.get(
    '/api/crm/skills',
    { schema: { tags, summary: 'Global skills', response: { 200: S.SkillList, ...errors(401) } } },
    async () => skills.listGlobal(),
  );
  app.post(
    '/api/crm/skills',
    {
      schema: {
        tags,
        summary: 'Publish a global skill (any user; the caller is recorded as its publisher)',
        body: S.CreateBody,
        response: { 201: S.Skill, ...errors(400, 401, 403, 409) },
      },
    },
    async (req, reply) => reply.status(201).send(await skills.createGlobal(requireActor(req), req.body)),
  );
  app.get(
    '/api/crm/skills/:id',
    {
      schema: {
        tags,
        summary: 'Read a skill',
        params: S.SkillIdParam,
        response: { 200: S.Skill, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => skills.get(requireActor(req), req.params.id),
  );
  app.put(
    '/api/crm/skills/:id',
    {
      schema: {
        tags,
        summary: 'Update a skill (global: its publisher or an admin), kept as a new version',
        params: S.SkillIdParam,
        body: S.UpdateBody,
        response: { 200: S.Skill, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req) => skills.update(requireActor(req), req.params.id, req.body),
  );
  app.delete(
    '/api/crm/skills/:id',
    {
      schema: {
        tags,
        summary: 'Delete a skill (global: its publisher or an admin)',
        params: S.SkillIdParam,
        response: { 200: S.Deleted, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => skills.remove(requireActor(req), req.params.id),
  );
  app.get(
    '/api/crm/skills/:id/evolution',
    {
      schema: {
        tags,
        summary: 'Every version of a skill with author and reason',
        params: S.SkillIdParam,
        response: { 200: S.Evolution, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => skills.evolution(requireActor(req), req.params.id),
  );

  app.get(
    '/api/crm/skill-updates',
    {
      schema: {
        tags,
        summary: 'Newer global versions offered to forks in your projects',
        querystring: S.UpdatesQuery,
        response: { 200: S.SkillUpdateList, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => skills.listUpdates(requireActor(req), req.query),
  );
  app.post(
    '/api/crm/skill-updates/:id/approve',
    {
      schema: {
        tags,
        summary: 'Merge the offered version into the fork',
        params: S.UpdateIdParam,
        response: { 200: S.Decision, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req) => skills.approve(requireActor(req), req.params.id),
  );
  app.post(
    '/api/crm/skill-updates/:id/reject',
    {
      schema: {
        tags,
        summary: 'Dismiss the offered version',
        params: S.UpdateIdParam,
        response: { 200: S.Decision, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req) => skills.reject(requireActor(req), req.params.id),
  );

  const p = '/api/crm/projects/:name';
  app.get(
    `${p}/skills`,
    {
      schema: {
        tags,
        summary: "Global skills plus this project's own",
        params: S.ProjectParam,
        response: { 200: S.SkillList, ...errors(401, 403, 404) },
      },
    },
    async (req) => skills.listForProject(requireActor(req), req.params.name),
  );
  app.post(
    `${p}/skills`,
    {
      schema: {
        tags,
        summary: 'Create a project skill',
        params: S.ProjectParam,
        body: S.CreateBody,
        response: { 201: S.Skill, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) =>
      reply.status(201).send(await skills.createForProject(requireActor(req), req.params.name, req.body)),
  );
  app.put(
    `${p}/skills/:id`,
    {
      schema: {
        tags,
        summary: "Update one of the project's skills",
        params: S.ProjectIdParams,
        body: S.UpdateBody,
        response: { 200: S.Skill, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req) => skills.updateForProject(requireActor(req), req.params.name, req.params.id, req.body),
  );
  app.delete(
    `${p}/skills/:id`,
    {
      schema: {
        tags,
        summary: "Delete one of the project's skills",
        params: S.ProjectIdParams,
        response: { 200: S.Deleted, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => skills.removeForProject(requireActor(req), req.params.name, req.params.id),
  );
  app.get(
    `${p}/skill-forks`,
    {
      schema: {
        tags,
        summary: "The project's forks of global skills",
        params: S.ProjectParam,
        response: { 200: S.SkillList, ...errors(401, 403, 404) },
      },
    },
    async (req) => skills.listForks(requireActor(req), req.params.name),
  );
  app.post(
    `${p}/skill-forks`,
    {
      schema: {
        tags,
        summary: 'Fork a global skill into the project',
        params: S.ProjectParam,
        body: S.ForkBody,
        response: { 201: S.Skill, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => reply.status(201).send(await skills.fork(requireActor(req), req.params.name, req.body)),
  );
  app.put(
    `${p}/skill-forks/:id`,
    {
      schema: {
        tags,
        summary: 'Update a fork',
        params: S.ProjectIdParams,
        body: S.UpdateBody,
        response: { 200: S.Skill, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req) => skills.updateForProject(requireActor(req), req.params.name, req.params.id, req.body, true),
  );
  app.delete(
    `${p}/skill-forks/:id`,
    {
      schema: {
        tags,
        summary: 'Delete a fork',
        params: S.ProjectIdParams,
        response: { 200: S.Deleted, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => skills.removeForProject(requireActor(req), req.params.name, req.params.id, true),
  );
}
