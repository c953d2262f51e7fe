/**
 * Pins, learnings and the knowledge graph (docs/ARCHITECTURE.md, Issues, skills, wiki, files, pins, learnings). One
 * service call each.
 */
import { Type } from 'typebox';
import { requireActor } from '../../http/auth.ts';
import { errors } from '../../http/schemas.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import type { PinsService } from './pins.service.ts';
import * as S from './pins.schemas.ts';

export function pinsRoutes(app: TypedApp, { pins: k }: { pins: PinsService }): void {
  const p = '/api/crm/projects/:name';

  app.get(
    `${p}/pins`,
    {
      schema: {
        tags: ['pins'],
        summary: 'Pinned notes, by position',
        params: S.ProjectParam,
        response: { 200: Type.Object({ pins: Type.Array(S.Pin) }), ...errors(401, 403, 404) },
      },
    },
    async (req) => k.listPins(requireActor(req), req.params.name),
  );
  app.post(
    `${p}/pins`,
    {
      schema: {
        tags: ['pins'],
        summary: 'Pin a note (optionally linked to an issue or a file)',
        params: S.ProjectParam,
        body: S.PinBody,
        response: { 201: S.Pin, ...errors(400, 401, 403, 404) },
      },
    },
    async (req, reply) => reply.status(201).send(await k.addPin(requireActor(req), req.params.name, req.body)),
  );
  app.delete(
    `${p}/pins/:id`,
    {
      schema: {
        tags: ['pins'],
        summary: 'Unpin',
        params: S.PinParams,
        response: { 200: Type.Object({ ok: Type.Boolean(), id: Type.Integer() }), ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => k.removePin(requireActor(req), req.params.name, req.params.id),
  );
  app.get(
    `${p}/learnings`,
    {
      schema: {
        tags: ['knowledge'],
        summary: 'Learnings, newest first',
        params: S.ProjectParam,
        querystring: S.LearningQuery,
        response: { 200: Type.Object({ learnings: Type.Array(S.Learning) }), ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => k.listLearnings(requireActor(req), req.params.name, req.query),
  );
  app.post(
    `${p}/learnings`,
    {
      schema: {
        tags: ['knowledge'],
        summary: 'Record a learning',
        params: S.ProjectParam,
        body: S.LearningBody,
        response: { 201: S.Learning, ...errors(400, 401, 403, 404) },
      },
    },
    async (req, reply) => reply.status(201).send(await k.addLearning(requireActor(req), req.params.name, req.body)),
  );
  app.get(
    `${p}/knowledge-graph`,
    {
      schema: {
        tags: ['knowledge'],
        summary: 'Nodes and edges of the project knowledge',
        params: S.ProjectParam,
        response: { 200: S.Graph, ...errors(401, 403, 404) },
      },
    },
    async (req) => k.graph(requireActor(req), req.params.name),
  );
}
