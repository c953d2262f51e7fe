/** Request and answer schemas of the onboarding area (TypeBox: validates, serializes, documents). */
import { type Static, Type } from 'typebox';
import { DateTime, named, Nullable } from '../../http/schemas.ts';
import { WorkerCreateBody } from '../workers/workers.schemas.ts';

/** The `config` JSON field of the multipart POST /onboarding/setup (its other parts are `files`). */
export const SetupConfig = Type.Object({
  displayName: Type.String({ minLength: 1, maxLength: 200 }),
  projectName: Type.String({ minLength: 1, maxLength: 100 }),
  niche: Type.Optional(Type.String({ maxLength: 200 })),
  teamPreset: Type.Optional(Type.String({ maxLength: 100 })),
  llmKey: Type.Optional(Type.String({ maxLength: 512 })),
  workers: Type.Optional(Type.Array(WorkerCreateBody, { maxItems: 50 })),
});
export type SetupConfig = Static<typeof SetupConfig>;

/** The checklist: steps, each step's state, counts and the timestamps of the record (all null when untouched). */
/** One model call's usage as `GET /account/usage` lists it. */
export const UsageRow = named(
  'UsageRow',
  Type.Object({
    id: Type.Integer(),
    project_name: Nullable(Type.String()),
    worker_id: Nullable(Type.Integer()),
    model: Nullable(Type.String()),
    input_tokens: Type.Integer(),
    output_tokens: Type.Integer(),
    cache_tokens: Type.Integer(),
    total_tokens: Type.Integer(),
    estimated: Type.Boolean({
      description:
        'a call cut by a crash or a stop, charged at its reservation (its worst case) instead of the provider answer',
    }),
    created_at: DateTime(),
  }),
);

export const Progress = Type.Object({
  steps: Type.Array(Type.String()),
  state: Type.Record(Type.String(), Type.String()),
  completed_count: Type.Integer(),
  total_steps: Type.Integer(),
  completed_at: Nullable(DateTime()),
  dismissed_at: Nullable(DateTime()),
  source: Nullable(Type.String()),
  started_at: Nullable(DateTime()),
  updated_at: Nullable(DateTime()),
});

/** One video slot. */
export const Video = Type.Object({ url: Nullable(Type.String()), seconds: Type.Integer(), title: Type.String() });
export const Videos = Type.Object({ videos: Type.Record(Type.String(), Video) });
