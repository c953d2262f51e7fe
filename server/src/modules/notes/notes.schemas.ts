/** Request and answer schemas of research notes (docs/ARCHITECTURE.md, Research notes). */
import { Type } from 'typebox';
import {
  DateTime,
  FilePart,
  Id,
  named,
  Nullable,
  PassageLocation,
  ProjectName,
  ProjectParam,
} from '../../http/schemas.ts';

export { ProjectParam };
export const NoteParams = Type.Object({ name: ProjectName, id: Id('the note id') });
export const SourceParams = Type.Object({ name: ProjectName, id: Id('the note id'), sourceId: Id('the source id') });
export const UploadParams = Type.Object({
  name: ProjectName,
  id: Id('the note id'),
  uploadId: Type.String({
    pattern: '^[a-f0-9]{32}$',
    description: 'the upload session id (32 hexadecimal characters)',
  }),
});

export const SourceType = Type.Union(
  [
    Type.Literal('youtube'),
    Type.Literal('web'),
    Type.Literal('video'),
    Type.Literal('audio'),
    Type.Literal('pdf'),
    Type.Literal('docx'),
    Type.Literal('txt'),
    Type.Literal('markdown'),
    Type.Literal('image'),
  ],
  { description: 'youtube, web, or the file kind: video, audio, pdf, docx, txt, markdown, image' },
);
export const SourceStatus = Type.Union(
  [Type.Literal('queued'), Type.Literal('processing'), Type.Literal('done'), Type.Literal('error')],
  {
    description: 'queued → processing → done (content_text filled) or error (error says why)',
  },
);

const NoteFields = Type.Object({
  id: Type.Integer(),
  title: Type.String(),
  description: Type.String(),
  created_at: DateTime(),
  source_count: Type.Integer(),
});
export const Note = named('Note', NoteFields);
export const NoteList = Type.Array(Note);

export const Source = named(
  'NoteSource',
  Type.Object({
    id: Type.Integer(),
    source_type: SourceType,
    title: Type.String({ description: 'the name given, else the default name (file name or address)' }),
    url: Nullable(Type.String()),
    status: SourceStatus,
    duration_seconds: Nullable(Type.Integer()),
    error: Nullable(Type.String({ description: 'why processing failed (status error)' })),
    content_text: Nullable(Type.String({ description: 'the extracted text (status done)' })),
    size_bytes: Nullable(Type.Integer()),
    created_at: DateTime(),
    index_partial: Type.Boolean({
      description:
        'true when the semantic index holds only the beginning of the text (the source is longer than its limits); indexed_chars says how far',
    }),
    indexed_chars: Nullable(
      Type.Integer({ description: 'characters of content_text the semantic index covers; null before it is indexed' }),
    ),
  }),
);
/** One citation of a chat answer (docs/ARCHITECTURE.md, Citations and locations). */
export const Citation = named(
  'NoteCitation',
  Type.Object({
    marker: Type.String({ description: "the label the answer's text uses, e.g. S1 (in [S1 p. 12])" }),
    source_id: Type.Integer({ description: 'the cited source' }),
    chunk_id: Nullable(
      Type.Integer({ description: "the cited passage in the semantic index (null: the source's text read directly)" }),
    ),
    location: PassageLocation,
    quote: Type.String({ description: 'a span of the cited passage (at most 300 characters)' }),
  }),
);
export const IssueLink = Type.Object({ issue_id: Type.Integer(), title: Type.String() });
export const ChatMessage = Type.Object({
  role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
  content: Type.String(),
  created_at: DateTime(),
  sources: Type.Array(Type.Object({ source_id: Type.Integer(), title: Type.String() }), {
    description: 'the sources an answer was grounded in',
  }),
  citations: Type.Array(Citation, {
    description: "the passages an answer cites (as the chat stream's citations event sent them)",
  }),
});
export const NoteDetail = Type.Object({
  ...NoteFields.properties,
  sources: Type.Array(Source),
  issue_links: Type.Array(IssueLink),
  chats: Type.Array(ChatMessage, { description: 'the chat, oldest first (the newest 200 messages)' }),
});

export const CreateBody = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 300 }),
    description: Type.Optional(Type.String({ maxLength: 20_000 })),
  },
  { additionalProperties: false },
);
export const Created = Type.Object({ id: Type.Integer(), title: Type.String() });

export const UrlSourceBody = Type.Object(
  {
    source_type: Type.Union([Type.Literal('youtube'), Type.Literal('web')]),
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'an http(s) address' }),
    title: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
export const PathSourceBody = Type.Object(
  {
    file_path: Type.String({
      minLength: 1,
      maxLength: 1000,
      description: "a file in the project's working directory, relative to it",
    }),
    title: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
/** JSON bodies of `POST …/sources`; a multipart request has no JSON body (null). */
export const SourceBody = Type.Union([UrlSourceBody, PathSourceBody, Type.Null()]);
export const SourceMultipart = Type.Object({
  file: FilePart('the file: video, audio, PDF, DOCX, TXT, Markdown or image (see the size limits)'),
  title: Type.Optional(Type.String({ description: 'the source name (default: the file name)' })),
});
export const Queued = Type.Object({ source_id: Type.Integer(), status: Type.Literal('queued') });

export const RenameBody = Type.Object(
  {
    title: Nullable(Type.String({ maxLength: 200, description: 'empty or null: back to the default name' })),
  },
  { additionalProperties: false },
);

export const ChunkInitBody = Type.Object(
  {
    filename: Type.String({ minLength: 1, maxLength: 255 }),
    mime: Type.String({ maxLength: 255 }),
    size: Type.Integer({ minimum: 1, maximum: 1_000_000_000_000, description: 'bytes' }),
  },
  { additionalProperties: false },
);
export const ChunkInit = Type.Object({
  upload_id: Type.String(),
  chunk_size: Type.Integer({ description: 'bytes per chunk (the last may be shorter)' }),
});
export const ChunkHeaders = Type.Object({
  'x-chunk-index': Type.String({
    pattern: '^(0|[1-9][0-9]{0,8})$',
    description: '0-based chunk index, strictly sequential',
  }),
});
export const ChunkReceived = Type.Object({ received_bytes: Type.Integer() });
export const ChunkDone = Type.Object({
  done: Type.Literal(true),
  source_id: Type.Integer(),
  status: Type.Literal('queued'),
});

export const ChatBody = Type.Object(
  {
    message: Type.String({ minLength: 1, maxLength: 8000 }),
    selectedSourceIds: Type.Optional(
      Type.Array(Type.Integer({ minimum: 1, maximum: 2147483647 }), {
        maxItems: 500,
        description: 'the sources to ground the answer in (default: all of the note)',
      }),
    ),
  },
  { additionalProperties: false },
);
