/** Request and answer schemas of the onboarding area (TypeBox: validates, serializes, documents). */
import { type Static, Type } from 'typebox';
import { DateTime, Nullable } from '../../http/schemas.ts';
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
