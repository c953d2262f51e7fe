/**
 * Schema pieces shared by every area (TypeBox): dates, the error envelope, named resource schemas, path
 * parameters.
 */
import { type Static, Type, type TSchema, type TUnsafe } from 'typebox';

/** An ISO-8601 timestamp in answers; services may hand a Date (serialized as ISO). */
export const DateTime = (opts: { description?: string } = {}) =>
  Type.Unsafe<Date | string>({ type: 'string', format: 'date-time', ...opts });
export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/**
 * A string that is one of `values`, written as JSON Schema's `enum` (typed as the union of the values). A union of
 * literals (`anyOf` of `const`s) means the same to clients, but in an answer fast-json-stringify picks the branch with
 * an Ajv check it compiles on the route's first answer (~30 ms: `/readyz`'s first answer, on the path to ready).
 */
export const StringEnum = <const T extends string>(values: readonly T[], opts: { description?: string } = {}) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...opts });

/** Id of the shared error schema (`components.schemas.Error` in the OpenAPI document). */
export const ERROR_SCHEMA_ID = 'Error';

/**
 * The error envelope every error answer uses, registered once with `app.addSchema` (app.ts) and referenced by
 * every error response of every route (`errors(…)`).
 */
export const ErrorSchema = Type.Object(
  {
    error: Type.String({ description: 'snake_case code, e.g. project_not_found, invalid_request, forbidden' }),
    message: Type.String({ description: 'one human sentence saying what went wrong' }),
    details: Type.Optional(
      Type.Array(
        Type.Object({
          path: Type.String({
            description: 'where: body, querystring, params or headers, then the field, e.g. body/name',
          }),
          message: Type.String({ description: 'what is wrong with it' }),
        }),
        { description: '400 invalid_request: every part of the request that broke the schema' },
      ),
    ),
    request_id: Type.Optional(
      Type.String({
        description: '500 internal_error: the request id (also the x-request-id header) to find it in the logs',
      }),
    ),
  },
  {
    $id: ERROR_SCHEMA_ID,
    title: 'Error',
    additionalProperties: true,
    description:
      'The error envelope {error, message, ...fields}. Some codes add fields: plan_limit_reached adds reason, current, limit and plan; token_budget_exceeded adds scope, used, cap, plan, worker_id and resets_at; storage_quota_exceeded adds used_bytes, quota_bytes and needed_bytes (bytes); project_exists adds name.',
  },
);
/** An error answer as the services build it. */
export type ErrorEnvelope = Static<typeof ErrorSchema>;

/** What an error status means in this API (the response descriptions of the OpenAPI document). */
const ERROR_MEANING: Record<number, string> = {
  400: 'Invalid request: invalid_request with details when the path, query or body breaks the schema, or a code of this route',
  401: 'No valid bearer token: unauthorized, invalid_token, token_expired or password_changed',
  402: 'Plan limit reached: plan_limit_reached with reason, current, limit and plan',
  403: "Not allowed: forbidden (another user's resource) or admin_required",
  404: 'Not found: a code naming what is missing, e.g. project_not_found',
  409: 'Conflicts with the current state, e.g. a taken name',
  410: 'Gone: it existed and no longer does, or has expired',
  413: 'Too large: payload_too_large, or storage_quota_exceeded with used_bytes, quota_bytes and needed_bytes',
  429: 'Too many requests, or a spent budget (token_budget_exceeded)',
  500: 'Internal error: internal_error with request_id',
  426: 'The route takes a protocol upgrade (WebSocket) or a newer client, e.g. upgrade_required',
  502: 'The upstream provider failed, e.g. llm_error',
  503: 'A provider is not configured or unavailable, e.g. llm_unavailable',
  504: 'The upstream provider did not answer in time',
  507: 'The server is short of disk space: insufficient_storage (its free space under DATA_DIR is kept above a floor)',
};

/**
 * Response schemas for the given error statuses: each a reference to the shared `Error` schema with the
 * status's meaning as its description.
 */
export const errors = (...codes: number[]): Record<number, TUnsafe<ErrorEnvelope>> =>
  Object.fromEntries(
    codes.map((c) => [
      c,
      Type.Unsafe<ErrorEnvelope>({ $ref: `${ERROR_SCHEMA_ID}#`, description: ERROR_MEANING[c] ?? 'An error' }),
    ]),
  );
export const Ok = Type.Object({ ok: Type.Boolean() });

const namedSchemas = new Map<string, TSchema>();

/**
 * A resource schema under a name of its own: `components.schemas.<id>` in the OpenAPI document, so that a
 * generated client gets a named type (`components["schemas"]["Project"]`). The schema is registered with every
 * app (`app.addSchema`, app.ts, see `namedSchemaList`) and the returned schema is a reference to it (`<id>#`)
 * with the same static type. For answers only (Fastify's serializer resolves the shared schema; the request
 * validator of http/input.ts compiles each route's own schema and does not).
 * @param id PascalCase, unique across the service.
 * @throws Error at import when the id is already taken by another schema.
 */
export function named<T extends TSchema>(id: string, schema: T): TUnsafe<Static<T>> {
  if (!/^[A-Z][A-Za-z0-9]*$/.test(id)) throw new Error(`schema name ${id}: PascalCase`);
  if (namedSchemas.has(id)) throw new Error(`schema name ${id} is already used`);
  namedSchemas.set(id, { ...schema, $id: id, title: id });
  return Type.Unsafe<Static<T>>({ $ref: `${id}#` });
}

/** Every schema `named(…)` has named so far (the areas' schema modules name theirs when imported). */
export const namedSchemaList = (): TSchema[] => [...namedSchemas.values()];

/** A file part of a multipart body (documentation: `format: binary`). */
export const FilePart = (description: string) => Type.String({ format: 'binary', description });
/**
 * The multipart body of an image upload (documentation only, see http/openapi.ts `multipart`): one part `file`.
 * @param kinds the accepted types, e.g. `['png', 'gif']`; `maxBytes` the size limit.
 */
export const ImageUploadBody = (kinds: readonly string[], maxBytes: number) =>
  Type.Object({
    file: FilePart(
      `the image: ${kinds.map((k) => k.toUpperCase()).join(', ')}, at most ${Math.round(maxBytes / 1024 / 1024)} MB; its type is checked by its first bytes, not its name`,
    ),
  });

/** A positive int4 id, described by what it identifies. */
export const Id = (description: string) => Type.Integer({ minimum: 1, maximum: 2147483647, description });
/** Path parameters `{id}`: the id of `what`, e.g. `idParam('the skill id')`. */
export const idParam = (description: string) => Type.Object({ id: Id(description) });

/** A project's technical name in a path (`:name`): it names one project across the service. */
export const ProjectName = Type.String({
  minLength: 1,
  maxLength: 200,
  description: "the project's technical name (projectName at creation; unique across the service)",
});
/** Path parameters `{name}`: a project. */
export const ProjectParam = Type.Object({ name: ProjectName });
/** Path parameters `{name, id}`: a project and the id of `what` in it. */
export const projectIdParams = (description: string) => Type.Object({ name: ProjectName, id: Id(description) });

/**
 * Where a passage is in its document (docs/ARCHITECTURE.md, Citations and locations): the fields that apply to the
 * source type. Named once (`PassageLocation` in the OpenAPI document); search hits and citations share it.
 */
export const PassageLocation = named(
  'PassageLocation',
  Type.Object(
    {
      page: Type.Optional(Type.Integer({ minimum: 1, description: 'first PDF page of the passage (1-based)' })),
      page_end: Type.Optional(
        Type.Integer({ minimum: 1, description: 'last PDF page, when the passage runs onto a later page' }),
      ),
      start_ms: Type.Optional(
        Type.Integer({ minimum: 0, description: "recording: start of the passage's first speech segment (ms)" }),
      ),
      end_ms: Type.Optional(
        Type.Integer({ minimum: 0, description: "recording: end of the passage's last speech segment (ms)" }),
      ),
      heading: Type.Optional(Type.String({ description: 'heading path inside the document, e.g. "Setup › Database"' })),
      line_start: Type.Optional(Type.Integer({ minimum: 1, description: 'first line of the passage (1-based)' })),
      line_end: Type.Optional(Type.Integer({ minimum: 1, description: 'last line of the passage (1-based)' })),
      activity_id: Type.Optional(
        Type.Integer({
          description: "an issue's passage: the id of the first activity entry it quotes (activity[].id)",
        }),
      ),
      activity_id_end: Type.Optional(
        Type.Integer({ description: "an issue's passage over several entries: the id of the last one" }),
      ),
    },
    { description: 'where the passage is in its document; only the fields that apply to its type' },
  ),
);
