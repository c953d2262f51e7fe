/** Schemas of the worker runtime routes: messages, runs, restart, prompt generation. */
import { Type } from 'typebox';
import { DateTime, named, Nullable, projectIdParams, ProjectParam } from '../../http/schemas.ts';

export const NameParam = ProjectParam;
export const RunParams = projectIdParams('the run id');
const WorkerId = Type.Integer({ minimum: 1, maximum: 2147483647 });

export const MessageBody = Type.Object(
  {
    worker_id: Type.Optional(WorkerId),
    worker_ids: Type.Optional(
      Type.Array(WorkerId, { minItems: 1, maxItems: 20, description: 'several workers in parallel' }),
    ),
    text: Type.String({ minLength: 1, maxLength: 32_000 }),
    model: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'a tier key or a model id; beats the project modelMode',
      }),
    ),
  },
  { additionalProperties: false },
);
export const MessageAnswer = Type.Object({ message_id: Type.Integer(), run_ids: Type.Array(Type.Integer()) });

export const RunStatus = Type.Union(
  [
    Type.Literal('queued'),
    Type.Literal('running'),
    Type.Literal('waiting_approval'),
    Type.Literal('succeeded'),
    Type.Literal('failed'),
    Type.Literal('cancelled'),
  ],
  {
    description:
      'queued → running → succeeded, failed or cancelled; running → waiting_approval (a tool call waits for a person) → queued once decided',
  },
);
const Usage = Type.Object({
  input_tokens: Type.Integer(),
  output_tokens: Type.Integer(),
  cache_tokens: Type.Integer(),
  total_tokens: Type.Integer(),
});
export const Run = named(
  'Run',
  Type.Object({
    id: Type.Integer(),
    worker_id: Type.Integer(),
    message_id: Type.Integer(),
    status: RunStatus,
    model: Nullable(Type.String()),
    requested_model: Nullable(Type.String()),
    cascade: Type.Boolean(),
    turns: Type.Integer(),
    tool_calls: Type.Array(
      Type.Object({ turn: Type.Integer(), tool: Type.String(), is_error: Type.Boolean(), summary: Type.String() }),
    ),
    error: Nullable(Type.String()),
    error_message: Nullable(Type.String()),
    reply_message_id: Nullable(Type.Integer()),
    reply: Nullable(Type.String()),
    usage: Usage,
    timings: Type.Object({
      queue_ms: Nullable(Type.Integer()),
      prep_ms: Nullable(Type.Integer()),
      gen_ms: Nullable(Type.Integer()),
      total_ms: Nullable(Type.Integer()),
    }),
    retry_of: Nullable(Type.Integer()),
    created_at: DateTime(),
    started_at: Nullable(DateTime()),
    finished_at: Nullable(DateTime()),
  }),
);
export const RunsQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'runs per page (default 50, at most 200)' }),
  ),
  before: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 2147483647,
      description: 'cursor: only runs older than this run id (the `next_before` of the previous page)',
    }),
  ),
  worker_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647, description: "only this worker's runs" })),
  status: Type.Optional(RunStatus),
});
export const RunList = Type.Object({
  runs: Type.Array(Run, { description: 'newest first' }),
  next_before: Nullable(
    Type.Integer({ description: 'pass as `before` for the next (older) page; null on the last page' }),
  ),
});
export const RetryAnswer = Type.Object({ run_id: Type.Integer(), retry_of: Type.Integer() });
export const RestartQuery = Type.Object({
  worker_id: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 2147483647,
      description: "the worker to restart; without it, every worker's runs stop",
    }),
  ),
});
export const RestartAnswer = Type.Object({
  ok: Type.Boolean(),
  worker_ids: Type.Array(Type.Integer()),
  cancelled: Type.Array(Type.Integer()),
});
