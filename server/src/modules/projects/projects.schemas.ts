/** Request and answer schemas of the projects area (TypeBox). */
import { Type } from 'typebox';
import { ApprovalRules } from '../workers/workers.schemas.ts';
import { DateTime, named, Nullable, ProjectParam } from '../../http/schemas.ts';
import { Worker, WorkerCreateBody } from '../workers/workers.schemas.ts';

export const NameParam = ProjectParam;

/** Both create shapes: `{displayName, projectName, niche?, teamPreset?}` or `{technical_name, displayName, description, icon, color}`. */
export const CreateProjectBody = Type.Object(
  {
    displayName: Type.String({ minLength: 1, maxLength: 200 }),
    projectName: Type.Optional(Type.String({ maxLength: 100 })),
    technical_name: Type.Optional(Type.String({ maxLength: 100 })),
    niche: Type.Optional(Type.String({ maxLength: 200 })),
    teamPreset: Type.Optional(Type.String({ maxLength: 100 })),
    description: Type.Optional(Type.String({ maxLength: 5000 })),
    icon: Type.Optional(Type.String({ maxLength: 200 })),
    color: Type.Optional(Type.String({ maxLength: 50 })),
  },
  {
    additionalProperties: false,
    description:
      'projectName or technical_name is the technical name (a slug of 2–40 characters, unique across the service: every path names a project by it; a taken name answers 409 project_exists).',
  },
);

export const Project = named(
  'Project',
  Type.Object({
    id: Type.Integer(),
    name: Type.String(),
    display_name: Type.String(),
    description: Type.String(),
    icon: Nullable(Type.String()),
    color: Nullable(Type.String()),
    niche: Nullable(Type.String()),
    team_preset: Nullable(Type.String()),
    config: Type.Object({ modelMode: Type.String() }),
    trial_mode: Type.Boolean(),
    uses_platform_key: Type.Boolean(),
    has_icon: Type.Boolean(),
    owner_id: Type.Integer(),
    worker_count: Type.Integer(),
    created_at: DateTime(),
    updated_at: DateTime(),
  }),
);

export const CreateAnswer = Type.Object({ ok: Type.Boolean(), project: Project, workers: Type.Array(Worker) });
export const CreateWithTeamBody = Type.Object(
  {
    project: CreateProjectBody,
    workers: Type.Array(WorkerCreateBody, { maxItems: 50 }),
    telegram: Type.Optional(Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) })),
  },
  { additionalProperties: false },
);
export const CreateWithTeamAnswer = Type.Object({
  ok: Type.Boolean(),
  project: Project,
  workers: Type.Array(Worker),
  bot_username: Nullable(Type.String()),
});

export const ModelMode = Type.Object({ modelMode: Type.Union([Type.Literal('strict'), Type.Literal('optimize')]) });
/** The project's configuration: the model mode and the default approval rules of its workers. */
export const ProjectConfig = Type.Object({
  modelMode: ModelMode.properties.modelMode,
  approvals: Type.Array(
    Type.Object({ tool: Type.String(), mode: Type.String(), above: Type.Optional(Type.Integer()) }),
    {
      description: "the default approval rules of the project's workers (a worker's own rules replace them)",
    },
  ),
});
/** `PUT /projects/:name/config`: any of the fields; `approvals` replaces the default rules (`[]`: none). */
export const ProjectConfigBody = Type.Object(
  {
    modelMode: Type.Optional(ModelMode.properties.modelMode),
    approvals: Type.Optional(ApprovalRules),
  },
  { additionalProperties: false },
);
export const Protocol = Type.Object({ protocol: Type.String(), updated_at: DateTime() });
export const ProtocolBody = Type.Object({ protocol: Type.String({ maxLength: 100_000 }) });
export const LogsQuery = Type.Object({
  category: Type.String({
    default: 'all',
    maxLength: 50,
    description: 'all (default), project, workers, issues, git, skills, sessions, tokens, chat or onboarding',
  }),
  lines: Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'newest entries to return (1–1000)' }),
});
export const Logs = Type.Object({
  category: Type.String(),
  entries: Type.Array(
    Type.Object({
      type: Type.String(),
      actor: Nullable(Type.String()),
      title: Nullable(Type.String()),
      detail: Nullable(Type.String()),
      worker_id: Nullable(Type.Integer()),
      ts: DateTime(),
    }),
  ),
  lines: Type.Array(Type.String()),
});
export const MetricsQuery = Type.Object({
  since: Type.Optional(
    Type.String({ maxLength: 40, description: 'first day (a date, UTC, inclusive); default 29 days before until' }),
  ),
  until: Type.Optional(Type.String({ maxLength: 40, description: 'last day (a date, UTC, inclusive); default today' })),
});
export const Metrics = Type.Object({
  since: Type.String(),
  until: Type.String(),
  days: Type.Array(
    Type.Object({
      date: Type.String(),
      events: Type.Integer(),
      tokens: Type.Integer(),
      by_type: Type.Record(Type.String(), Type.Integer()),
    }),
  ),
  totals: Type.Object({ events: Type.Integer(), tokens: Type.Integer() }),
});
export const ActiveIssueBody = Type.Object({
  issue_id: Type.Integer({ minimum: 1, maximum: 2147483647 }),
  title: Type.Optional(Type.String({ maxLength: 500 })),
});
export const ActiveIssue = Type.Object({
  ok: Type.Optional(Type.Boolean()),
  active_issue_id: Nullable(Type.Integer()),
  title: Nullable(Type.String()),
  ts: Nullable(DateTime()),
});
export const UploadAnswer = Type.Object({ ok: Type.Boolean(), url: Type.String() });
/** A binary answer (image bytes); Fastify sends Buffers as they are. */
export const Binary = Type.Unsafe<Buffer>({ type: 'string', format: 'binary' });
