/**
 * Request and answer schemas of pins, learnings and the knowledge graph (docs/ARCHITECTURE.md, Issues, skills, wiki,
 * files, pins, learnings).
 */
import { Type } from 'typebox';
import { DateTime, named, Nullable, projectIdParams, ProjectParam } from '../../http/schemas.ts';

export { ProjectParam };
export const PinParams = projectIdParams('the pin id');
export const Pin = named(
  'Pin',
  Type.Object({
    id: Type.Integer(),
    text: Type.String(),
    issue_id: Nullable(Type.Integer()),
    path: Nullable(Type.String()),
    position: Type.Integer(),
    created_by: Nullable(Type.String()),
    created_at: DateTime(),
  }),
);
export const PinBody = Type.Object(
  {
    text: Type.String({ minLength: 1, maxLength: 5000 }),
    issue_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647 })),
    path: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
    position: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  },
  { additionalProperties: false },
);
export const Learning = named(
  'Learning',
  Type.Object({
    id: Type.Integer(),
    text: Type.String(),
    source: Nullable(Type.String()),
    tags: Type.Array(Type.String()),
    author: Nullable(Type.String()),
    created_at: DateTime(),
  }),
);
export const LearningBody = Type.Object(
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
export const LearningQuery = Type.Object({
  tag: Type.Optional(Type.String({ minLength: 1, maxLength: 50, description: 'only learnings with this tag' })),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 500,
      default: 100,
      description: 'newest learnings to return (default 100, at most 500)',
    }),
  ),
});
const NodeType = Type.Union(
  [Type.Literal('issue'), Type.Literal('skill'), Type.Literal('wiki'), Type.Literal('note'), Type.Literal('worker')],
  { description: 'issue, skill, wiki, note or worker' },
);
const EdgeType = Type.Union(
  [
    Type.Literal('assignment'),
    Type.Literal('uses'),
    Type.Literal('fork'),
    Type.Literal('link'),
    Type.Literal('reference'),
  ],
  { description: 'assignment, uses, fork, link or reference' },
);
export const GraphNode = Type.Object({ id: Type.String(), type: NodeType, label: Type.String() });
export const GraphEdge = Type.Object({ source: Type.String(), target: Type.String(), type: EdgeType });
export const Graph = Type.Object({ nodes: Type.Array(GraphNode), edges: Type.Array(GraphEdge) });
