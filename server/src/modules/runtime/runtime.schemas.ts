/** Schemas of the worker runtime routes: messages, runs, restart, prompt generation. */
import { Type } from 'typebox';
import { TOOL_RESULT_PREVIEW_BYTES } from './tool-result.ts';
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
const ToolResult = Type.Object(
  {
    preview: Type.String({
      description: `the first ${TOOL_RESULT_PREVIEW_BYTES} UTF-8 bytes of the result, secrets redacted (JSON indented)`,
    }),
    bytes: Type.Integer({ description: 'UTF-8 bytes of the whole (redacted) result' }),
    truncated: Type.Boolean({ description: 'whether the preview is shorter than the result' }),
    json: Type.Boolean({ description: 'whether the result is JSON' }),
  },
  {
    description:
      'the result the model got from the tool (an error message when `is_error`); in GET …/runs/:id and the events snapshot, not in the runs list; absent on runs recorded before results were kept',
  },
);
const ToolCall = Type.Object({
  turn: Type.Integer({ description: 'the turn (1-based) whose answer asked for the call' }),
  tool: Type.String(),
  is_error: Type.Boolean({ description: 'whether the tool failed or the call was refused' }),
  summary: Type.String({ description: 'the input as JSON, secrets redacted, cut at 200 characters' }),
  result: Type.Optional(ToolResult),
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
    tool_calls: Type.Array(ToolCall),
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
