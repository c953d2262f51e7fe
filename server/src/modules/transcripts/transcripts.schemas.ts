/** API shapes of meeting transcripts (docs/ARCHITECTURE.md, Meeting transcripts and voice dictation). */
import { Type } from 'typebox';
import { DateTime, FilePart, named, Nullable, ProjectName } from '../../http/schemas.ts';
import { MAX_FRAMES, PAGE_DEFAULT, PAGE_MAX, STATUSES } from './transcripts.rules.ts';

export const Status = Type.Unsafe<(typeof STATUSES)[number]>(
  Type.String({ enum: [...STATUSES], description: 'the transcript job state' }),
);

export const Summary = Type.Object(
  {
    tldr: Type.String(),
    key_points: Type.Array(Type.String()),
    action_items: Type.Array(Type.Object({ task: Type.String(), owner: Nullable(Type.String()) })),
    decisions: Type.Array(Type.String()),
    topics: Type.Array(Type.String()),
    model: Type.String(),
    generated_at: Type.String({ format: 'date-time' }),
  },
  { description: 'the meeting summary' },
);

export const Frames = Type.Array(
  Type.Object({
    ts_ms: Type.Integer({ description: 'the frame time in the video (ms)' }),
    description: Nullable(Type.String({ description: 'what the frame shows; null until analysed' })),
  }),
  { description: `scene-change frames of a video (at most ${MAX_FRAMES})` },
);

export const UploadMultipart = Type.Object({
  file: FilePart('the meeting recording: audio mp3, wav, m4a, aac, ogg, opus, flac or video mp4, mov, webm, mkv'),
  filename: Type.String({ description: 'the file name; its extension must be one of the accepted ones' }),
  embed_to_rag: Type.Optional(
    Type.String({ description: 'true or false (default true): add the transcript to the semantic index' }),
  ),
});

export const Queued = Type.Object({
  transcript_id: Type.Integer(),
  job_id: Type.String(),
  status: Type.Literal('queued'),
});

export const ListQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: PAGE_MAX,
      default: PAGE_DEFAULT,
      description: `transcripts per page (default ${PAGE_DEFAULT}, at most ${PAGE_MAX})`,
    }),
  ),
  cursor: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 2147483647,
      description: 'the next_cursor of the previous page: only transcripts with a smaller id',
    }),
  ),
});

const Common = {
  transcript_id: Type.Integer(),
  job_id: Type.String(),
  filename: Type.String(),
  kind: Type.Union([Type.Literal('audio'), Type.Literal('video')]),
  size_bytes: Type.Integer(),
  status: Status,
  progress_pct: Type.Integer({ minimum: 0, maximum: 100 }),
  step_label: Type.String(),
  error: Nullable(Type.String()),
  embed_to_rag: Type.Boolean(),
  created_at: DateTime(),
  updated_at: DateTime(),
  finished_at: Nullable(DateTime()),
};

export const ListItem = named(
  'TranscriptListItem',
  Type.Object({
    ...Common,
    tldr: Nullable(Type.String({ description: 'the summary in one paragraph, once summarized' })),
  }),
);

export const List = Type.Object({
  items: Type.Array(ListItem),
  next_cursor: Nullable(Type.Integer({ description: 'pass as cursor for the next page; null on the last page' })),
});

export const Detail = named(
  'Transcript',
  Type.Object({
    ...Common,
    mime: Type.String(),
    transcript_text: Nullable(Type.String()),
    summary_json: Nullable(Summary),
    frames_json: Nullable(Frames),
  }),
);

export const JobParams = Type.Object({
  name: ProjectName,
  jobId: Type.String({ minLength: 1, maxLength: 64, description: 'the job_id of the transcript job' }),
});

export const TokenQuery = Type.Object({
  token: Type.Optional(Type.String({ maxLength: 4096, description: 'the bearer token (for EventSource clients)' })),
});
