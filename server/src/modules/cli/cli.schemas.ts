/** Request and answer schemas of the CLI routes (docs/ARCHITECTURE.md, The command-line client). */
import { Type } from 'typebox';
import { DateTime, Id, named, Nullable, ProjectName } from '../../http/schemas.ts';

const Mode = Type.String({
  minLength: 1,
  maxLength: 100,
  description: "the session's mode: the worker the CLI acts as (its id, label or role)",
});
const SessionId = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: '^[A-Za-z0-9._:-]+$',
  description: 'the CLI session id (letters, digits, dot, underscore, colon, hyphen)',
});

export const ProjectModeParams = Type.Object({ project: ProjectName, mode: Mode });
export const ProjectOnlyParams = Type.Object({ project: ProjectName });
/**
 * `/api/cli/transcript/:project/:modeOrSession`: one path, two meanings by method: the upload (POST) names the
 * session's mode, the download (GET) the session id. One parameter name for both keeps them one path.
 */
export const TranscriptUploadParams = Type.Object({
  project: ProjectName,
  modeOrSession: Type.String({
    minLength: 1,
    maxLength: 100,
    description: "POST (upload): the session's mode, the worker the CLI acts as (its id, label or role)",
  }),
});
export const TranscriptDownloadParams = Type.Object({
  project: ProjectName,
  modeOrSession: Type.String({
    minLength: 1,
    maxLength: 200,
    pattern: '^[A-Za-z0-9._:-]+$',
    description: 'GET (download): the CLI session id (letters, digits, dot, underscore, colon, hyphen)',
  }),
});
export const InitParams = ProjectModeParams;
export const PlatformParams = Type.Object({
  platform: Type.Union([Type.Literal('linux'), Type.Literal('macos'), Type.Literal('windows')], {
    description: 'linux, macos or windows',
  }),
});

export const VersionHeader = Type.Object(
  {
    'x-arc-version': Type.Optional(
      Type.String({ maxLength: 64, description: "the CLI's release (e.g. 1.0.16); gates features by release" }),
    ),
  },
  { additionalProperties: true },
);

export const HeartbeatBody = Type.Object({
  device_id: Type.String({ minLength: 1, maxLength: 200, description: 'a stable id of the device' }),
  hostname: Type.String({ maxLength: 255 }),
  platform: Type.String({ maxLength: 64, description: 'e.g. linux, darwin, win32' }),
  version: Type.String({ maxLength: 64, description: 'the CLI release' }),
  project: Type.Optional(Nullable(Type.String({ maxLength: 200, description: 'the project the CLI works in' }))),
});
export const HeartbeatAnswer = Type.Object({
  ok: Type.Boolean(),
  recorded: Type.Boolean({ description: 'false for a CLI older than 1.0.14 (device heartbeats start there)' }),
});

export const Device = named(
  'CliDevice',
  Type.Object({
    device_id: Type.String(),
    hostname: Type.String(),
    platform: Type.String(),
    arc_version: Type.String({ description: 'the CLI release of its last check-in' }),
    last_project: Nullable(Type.String()),
    first_seen: DateTime(),
    last_seen: DateTime(),
    credential: Nullable(
      Type.Object(
        {
          id: Type.Integer({ description: 'the access token id (GET /account/tokens)' }),
          prefix: Type.String(),
          last_used_at: Nullable(DateTime()),
        },
        { description: 'the device credential its link issued; null when it has none (revoked, or linked before)' },
      ),
    ),
  }),
);
export const DeviceList = Type.Object({ devices: Type.Array(Device, { description: 'at most 20, newest first' }) });

export const CliStatus = Type.Object({
  installed: Type.Boolean({ description: 'a CLI login or device check-in happened in the last 30 days' }),
  last_cli_at: Nullable(DateTime()),
});

export const SessionsQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 500, default: 120, description: 'events (default 120, at most 500)' }),
  ),
});
const Metadata = Type.Object(
  {},
  {
    additionalProperties: true,
    description: 'mode, duration_ms; from arc 1.0.15: first_prompt, issue_id, issue_title, session_id, message_count',
  },
);
export const SessionEvent = Type.Object({
  id: Type.Integer(),
  worker_id: Nullable(Type.Integer()),
  label: Type.String(),
  timestamp: DateTime(),
  duration: Type.Integer({ description: 'ms' }),
  metadata: Metadata,
});
export const Sessions = Type.Object({
  events: Type.Array(SessionEvent, { description: 'session-end events, newest first' }),
  transcriptSessionIds: Type.Array(Type.String(), {
    description: 'sessions of these events with a transcript of yours',
  }),
});

export const SessionEndBody = Type.Object({
  duration_ms: Type.Integer({ minimum: 0, maximum: 31 * 24 * 3600 * 1000, description: 'ms' }),
  first_prompt: Type.Optional(
    Type.String({ maxLength: 100_000, description: 'whitespace is collapsed and the text cut to 280 characters' }),
  ),
  issue_id: Type.Optional(Nullable(Id('the issue the session worked on'))),
  issue_title: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
  session_id: Type.Optional(SessionId),
  message_count: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000 })),
});
export const SessionEndAnswer = Type.Object({
  ok: Type.Boolean(),
  event: Type.Object({
    worker_id: Nullable(Type.Integer()),
    label: Type.String(),
    duration: Type.Integer(),
    metadata: Metadata,
  }),
});

export const TranscriptBody = Type.Object({
  session_id: SessionId,
  device_id: Type.Optional(Type.String({ maxLength: 200 })),
  message_count: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000 })),
  first_prompt: Type.Optional(Type.String({ maxLength: 100_000 })),
  size_bytes: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 2 ** 40, description: 'informative; the stored size is measured' }),
  ),
  gzip_b64: Type.String({
    minLength: 1,
    description: 'base64 of the gzip of the raw jsonl: at most 4 MB compressed and 32 MB inflated',
  }),
});
const transcriptFields = {
  session_id: Type.String(),
  worker_id: Nullable(Type.Integer()),
  first_prompt: Type.String(),
  message_count: Type.Integer(),
  size_bytes: Type.Integer({ description: 'bytes of the raw jsonl' }),
  updated_at: DateTime(),
};
export const TranscriptSummary = named('CliTranscript', Type.Object(transcriptFields));
export const TranscriptStored = Type.Object({ ok: Type.Boolean(), ...transcriptFields });
export const TranscriptList = Type.Object({ transcripts: Type.Array(TranscriptSummary) });
export const TranscriptDownload = Type.Object({ ...transcriptFields, jsonl: Type.String() });
export const TranscriptView = Type.Object({
  ...transcriptFields,
  messages: Type.Array(Type.Object({ role: Type.String(), text: Type.String(), ts: Nullable(DateTime()) })),
});
export const ViewQuery = Type.Object({ session: SessionId });

export const Download = Type.Object({
  platform: Type.String(),
  version: Type.String(),
  package: Type.String(),
  requires: Type.String(),
  url: Type.String({ description: 'the package as an npm tarball ({app_url}/api/cli/arc.tgz)' }),
  install: Type.Array(Type.String(), { description: 'the install steps, in order' }),
});

export const Link = Type.Object({
  code: Type.String({ description: 'the code the link page shows and the signed-in user confirms' }),
  link_token: Type.String({ description: 'the secret the CLI passes to the link stream (token=…)' }),
  url: Type.String({ description: '{app_url}/cli/link?code=…' }),
  expires_at: DateTime(),
});
export const ConfirmBody = Type.Object({ code: Type.String({ minLength: 1, maxLength: 20 }) });
export const LinkBody = Type.Object(
  {
    device_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'the device asking' })),
    hostname: Type.Optional(Type.String({ maxLength: 255 })),
  },
  { additionalProperties: false },
);
export const DeviceParams = Type.Object({
  device_id: Type.String({ minLength: 1, maxLength: 200, description: 'the device id the CLI reported at check-in' }),
});
export const LinkStreamQuery = Type.Object({
  token: Type.Optional(Type.String({ maxLength: 4096, description: "a signed-in user's token, or a link token" })),
});

export const InitAnswer = Type.Object({
  project: Type.String(),
  worker: Type.Object({ id: Type.Integer(), label: Type.String(), role: Nullable(Type.String()) }),
  context: Type.String({ description: 'the worker context as a run starts with it (without the workspace section)' }),
  skills: Type.Array(Type.Object({ name: Type.String(), description: Type.String() })),
  autoloaded: Type.Array(
    Type.Object({ name: Type.String(), content: Type.String({ description: 'cut to 3000 characters' }) }),
  ),
});
