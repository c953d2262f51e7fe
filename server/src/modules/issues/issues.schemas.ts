/** Request and answer schemas of issues (docs/ARCHITECTURE.md, Issues, skills, wiki, files, pins, learnings). */
import { Type } from 'typebox';
import { DateTime, Id, named, Nullable, projectIdParams, ProjectName, ProjectParam } from '../../http/schemas.ts';

export const STATUSES = ['open', 'in_progress', 'blocked', 'deferred', 'closed'] as const;
export const PRIORITIES = ['P0', 'P1', 'P2', 'P3'] as const;
export const Status = Type.Union([
  Type.Literal('open'),
  Type.Literal('in_progress'),
  Type.Literal('blocked'),
  Type.Literal('deferred'),
  Type.Literal('closed'),
]);
export const Priority = Type.Union([Type.Literal('P0'), Type.Literal('P1'), Type.Literal('P2'), Type.Literal('P3')]);
const statusAlt = STATUSES.join('|');

export { ProjectParam };
export const IssueParams = projectIdParams('the issue number (per project)');
export const McpParams = Type.Object({ project: ProjectName, id: Id('the issue number (per project)') });

export const Entry = Type.Object({
  id: Type.Integer(),
  kind: Type.String({ description: 'create, log, status, assign, take or edit' }),
  author: Type.String(),
  message: Type.String(),
  ts: DateTime(),
});
const issueFields = {
  id: Type.Integer({ description: 'numeric id, per project' }),
  title: Type.String(),
  description: Type.String(),
  status: Status,
  assignee: Nullable(Type.String()),
  priority: Priority,
  labels: Type.Array(Type.String()),
  created_by: Nullable(Type.String()),
  created_at: DateTime(),
  updated_at: DateTime(),
};
export const IssueSummary = named('IssueSummary', Type.Object(issueFields));
export const Issue = named('Issue', Type.Object({ ...issueFields, activity: Type.Array(Entry) }));

export const ListQuery = Type.Object({
  status: Type.Optional(
    Type.String({ pattern: `^(${statusAlt})(,(${statusAlt}))*$`, description: 'one status or a comma list' }),
  ),
  assignee: Type.Optional(Type.String({ maxLength: 200, description: 'exact assignee; `none` for unassigned' })),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 500, default: 50, description: 'issues per page (default 50, at most 500)' }),
  ),
  offset: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 10_000_000, default: 0, description: 'issues to skip (newest first)' }),
  ),
});
export const IssueList = Type.Object({
  issues: Type.Array(IssueSummary),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
});

const Title = Type.String({ minLength: 1, maxLength: 500 });
const Description = Type.String({ maxLength: 100_000 });
const Assignee = Nullable(Type.String({ minLength: 1, maxLength: 200 }));
const Labels = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50 });
export const CreateBody = Type.Object(
  {
    title: Title,
    description: Type.Optional(Description),
    priority: Type.Optional(Priority),
    assignee: Type.Optional(Assignee),
    labels: Type.Optional(Labels),
  },
  { additionalProperties: false },
);
export const UpdateBody = Type.Object(
  {
    status: Type.Optional(Status),
    assignee: Type.Optional(Assignee),
    title: Type.Optional(Title),
    priority: Type.Optional(Priority),
    description: Type.Optional(Description),
    labels: Type.Optional(Labels),
  },
  { additionalProperties: false },
);
export const McpUpdateBody = Type.Object(
  {
    status: Type.Optional(Status),
    assignee: Type.Optional(Assignee),
    author: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);
export const LogBody = Type.Object(
  {
    message: Type.String({ minLength: 1, maxLength: 20_000 }),
    author: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    ts: Type.Optional(Type.String({ maxLength: 64, description: 'ISO-8601; future values are clamped to now' })),
  },
  { additionalProperties: false },
);
export const McpLogAnswer = Type.Object({ ok: Type.Boolean(), entry: Entry });
