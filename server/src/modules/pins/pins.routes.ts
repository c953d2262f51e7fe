/** Pins, learnings and the knowledge graph (specification: pins; Memory and knowledge). One service call each. */
import { Type } from '@sinclair/typebox';
import { requireActor } from '../../http/auth.ts';
import { DateTime, errors, Nullable } from '../../http/schemas.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import type { PinsService } from './pins.service.ts';

const ProjectParam = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) });
const PinParams = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  id: Type.Integer({ minimum: 1, maximum: 2147483647 }),
});
const Pin = Type.Object({
  id: Type.Integer(),
  text: Type.String(),
  issue_id: Nullable(Type.Integer()),
  path: Nullable(Type.String()),
  position: Type.Integer(),
  created_by: Nullable(Type.String()),
  created_at: DateTime(),
});
const PinBody = Type.Object(
  {
    text: Type.String({ minLength: 1, maxLength: 5000 }),
    issue_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647 })),
    path: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
    position: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  },
  { additionalProperties: false },
);
const Learning = Type.Object({
  id: Type.Integer(),
  text: Type.String(),
  source: Nullable(Type.String()),
  tags: Type.Array(Type.String()),
  author: Nullable(Type.String()),
  created_at: DateTime(),
});
const LearningBody = Type.Object(
  {
    text: Type.String({ minLength: 1, maxLength: 5000 }),
    source: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 500,
        description: 'where it was learned: a worker, an issue, a session…',
      }),
    ),
    tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 20 })),
  },
  { additionalProperties: false },
);
const LearningQuery = Type.Object({
  tag: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
});
const Graph = Type.Object({
  nodes: Type.Array(
    Type.Object({
      id: Type.String(),
      type: Type.String({ description: 'issue, skill, wiki, note or worker' }),
      label: Type.String(),
    }),
  ),
  edges: Type.Array(
    Type.Object({
      source: Type.String(),
      target: Type.String(),
      type: Type.String({ description: 'assignment, uses, fork, link or reference' }),
    }),
  ),
});

export function pinsRoutes(app: TypedApp, { pins: k }: { pins: PinsService }): void {
  const p = '/api/crm/projects/:name';

  app.get(
    `${p}/pins`,
    {
      schema: {
        tags: ['pins'],
        summary: 'Pinned notes, by position',
        params: ProjectParam,
        response: { 200: Type.Object({ pins: Type.Array(Pin) }), ...errors(401, 403, 404) },
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
        params: ProjectParam,
        body: PinBody,
        response: { 201: Pin, ...errors(400, 401, 403, 404) },
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
        params: PinParams,
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
        params: ProjectParam,
        querystring: LearningQuery,
        response: { 200: Type.Object({ learnings: Type.Array(Learning) }), ...errors(400, 401, 403, 404) },
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
        params: ProjectParam,
        body: LearningBody,
        response: { 201: Learning, ...errors(400, 401, 403, 404) },
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
        params: ProjectParam,
        response: { 200: Graph, ...errors(401, 403, 404) },
      },
    },
    async (req) => k.graph(requireActor(req), req.params.name),
  );
}
