/**
 * Typed errors and the one error handler that renders the error envelope:
 * `{error: '<snake_case code>', message: '<one human sentence>', ...fields}`, also for Fastify's own errors
 * (router, content types, the HTTP parser) and unknown routes. No answer repeats the input; 5xx answers carry
 * the request id and a generic message; the log carries the cause.
 */
import { STATUS_CODES as STATUS_TEXT } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly fields: Record<string, unknown> = {},
  ) {
    super(message);
  }
}
export class BadRequest extends AppError {
  constructor(code: string, message: string, fields?: Record<string, unknown>) {
    super(400, code, message, fields);
  }
}
export class Unauthorized extends AppError {
  constructor(message = 'Authentication is required.', code = 'unauthorized', fields?: Record<string, unknown>) {
    super(401, code, message, fields);
  }
}
export class PaymentRequired extends AppError {
  constructor(code: string, message: string, fields?: Record<string, unknown>) {
    super(402, code, message, fields);
  }
}
export class Forbidden extends AppError {
  constructor(
    message = 'You do not have access to this resource.',
    code = 'forbidden',
    fields?: Record<string, unknown>,
  ) {
    super(403, code, message, fields);
  }
}
export class NotFound extends AppError {
  constructor(message = 'Not found.', code = 'not_found') {
    super(404, code, message);
  }
}
export class Conflict extends AppError {
  constructor(code: string, message: string, fields?: Record<string, unknown>) {
    super(409, code, message, fields);
  }
}
export class Gone extends AppError {
  constructor(message = 'This resource has been removed.', code = 'gone') {
    super(410, code, message);
  }
}
export class PayloadTooLarge extends AppError {
  constructor(
    message = 'The request body is too large.',
    code = 'payload_too_large',
    fields?: Record<string, unknown>,
  ) {
    super(413, code, message, fields);
  }
}
export class TooManyRequests extends AppError {
  constructor(code: string, message: string, fields?: Record<string, unknown>) {
    super(429, code, message, fields);
  }
}
/** 507: the service's disk has no room for the write (its free space is kept above a floor). */
export class InsufficientStorage extends AppError {
  constructor(code: string, message: string, fields?: Record<string, unknown>) {
    super(507, code, message, fields);
  }
}
export class Upstream extends AppError {
  constructor(statusCode: 502 | 503 | 504, code: string, message: string, fields?: Record<string, unknown>) {
    super(statusCode, code, message, fields);
  }
}

/** Fastify's and its plugins' own errors, by code: [status, our code, our message]. Their messages may echo input. */
const FASTIFY_CODES: Record<string, [number, string, string]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: [413, 'payload_too_large', 'The request body is too large.'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, 'unsupported_media_type', 'This content type is not accepted here.'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'invalid_request', 'The Content-Length header does not match the body.'],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'invalid_request', 'The JSON body is empty.'],
  FST_ERR_CTP_INVALID_JSON_BODY: [400, 'invalid_json', 'The body is not valid JSON.'],
  FST_ERR_CTP_MALFORMED_JSON: [400, 'invalid_json', 'The body is not valid JSON.'],
  FST_REQ_FILE_TOO_LARGE: [413, 'payload_too_large', 'The uploaded file is too large.'],
  FST_PARTS_LIMIT: [413, 'payload_too_large', 'Too many parts in the upload.'],
  FST_FILES_LIMIT: [413, 'payload_too_large', 'Too many files in the upload.'],
  FST_FIELDS_LIMIT: [413, 'payload_too_large', 'Too many fields in the upload.'],
  FST_INVALID_MULTIPART_CONTENT_TYPE: [400, 'invalid_request', 'The request is not multipart/form-data.'],
  FST_ERR_VALIDATION: [400, 'invalid_request', 'The request is not valid.'],
  FST_ERR_BAD_URL: [400, 'invalid_request', 'The URL is not valid (malformed percent-encoding).'],
  FST_ERR_MAX_PARAM_LENGTH: [414, 'uri_too_long', 'A part of the URL path is too long.'],
};

/** Our code for a 4xx status that came without one (an unknown Fastify or plugin error). */
const STATUS_CODES: Record<number, string> = {
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  408: 'request_timeout',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  431: 'headers_too_large',
};

/** One Ajv error as Fastify hands it to the error handler (only these fields are read; never `data`). */
export interface ValidationError {
  keyword: string;
  instancePath: string;
  schemaPath: string;
  params: Record<string, any>;
  message?: string;
  parentSchema?: Record<string, any>;
}

/** One refused field of a 400 `invalid_request`: `path` like `body/title`, `message` one phrase. */
export interface Detail {
  path: string;
  message: string;
}

/** Phrases for string formats (Ajv's own message prints the format's name). */
const FORMATS: Record<string, string> = {
  email: 'must be an e-mail address',
  'date-time': 'must be a date and time (ISO 8601, e.g. 2026-01-31T12:00:00Z)',
  date: 'must be a date (YYYY-MM-DD)',
  time: 'must be a time (HH:MM:SS)',
  uri: 'must be a URL',
  url: 'must be a URL',
  uuid: 'must be a UUID',
};

const showValue = (v: unknown) => (typeof v === 'string' ? `'${v}'` : JSON.stringify(v));
const oneOf = (values: unknown[]) =>
  `must be one of: ${values.slice(0, 20).map(showValue).join(', ')}${values.length > 20 ? ', …' : ''}`;
const safeKey = (key: unknown) => (typeof key === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(key) ? key : undefined);

/** One Ajv error as a detail. Messages name fields and schema values, never the input (except a field-like key). */
function detailOf(e: ValidationError, part: string): Detail {
  const path = `${part}${e.instancePath}`;
  switch (e.keyword) {
    case 'required': {
      const key = safeKey(e.params.missingProperty);
      return { path: key ? `${path}/${key}` : path, message: key ? 'is required' : 'misses a required field' };
    }
    case 'additionalProperties': {
      const key = safeKey(e.params.additionalProperty);
      return key
        ? { path: `${path}/${key}`, message: `unknown field '${key}'` }
        : { path, message: 'has an unknown field' };
    }
    case 'enum':
      return { path, message: oneOf(e.params.allowedValues ?? []) };
    case 'const':
      return { path, message: `must be ${showValue(e.params.allowedValue)}` };
    case 'type':
      return { path, message: `must be ${String(e.params.type).split(',').join(' or ')}` };
    case 'format':
      return { path, message: FORMATS[e.params.format] ?? 'is not in the expected format' };
    case 'pattern': {
      const description = e.parentSchema?.description;
      return {
        path,
        message: `is not in the expected format${typeof description === 'string' ? ` (${description})` : ''}`,
      };
    }
    default:
      return { path, message: e.message ?? 'is not valid' };
  }
}

/**
 * A union (`anyOf`/`oneOf`) that no branch matched, as one detail. A branch whose type matched but whose
 * constraint failed (a string too long) speaks for the union; otherwise the union's literals (TypeBox's
 * `Union([Literal…])`, nested unions included) and accepted types are listed: "must be one of: 'open',
 * 'closed', null", "must be string or null", "must be 'auto' or integer".
 */
function unionDetail(e: ValidationError, all: ValidationError[], part: string): Detail {
  const path = `${part}${e.instancePath}`;
  const branches = new Map<string, ValidationError[]>();
  for (const b of all) {
    if (b.keyword === 'anyOf' || b.keyword === 'oneOf') continue; // a nested union's summary: its branches speak
    const index = b.schemaPath.slice(e.schemaPath.length + 1).split('/')[0];
    branches.set(index, [...(branches.get(index) ?? []), b]);
  }
  if (!branches.size) return { path, message: e.message ?? 'is not valid' };
  const literal = (b: ValidationError) => b.keyword === 'const' || b.keyword === 'enum';
  for (const errs of branches.values()) {
    const constrained = errs.find((b) => b.keyword !== 'type' && !literal(b));
    if (constrained && !errs.some((b) => b.keyword === 'type')) return detailOf(constrained, part);
  }
  const values: unknown[] = [];
  const types: string[] = [];
  for (const errs of branches.values()) {
    const literals = errs.filter(literal);
    if (literals.length) {
      for (const b of literals)
        values.push(...(b.keyword === 'const' ? [b.params.allowedValue] : (b.params.allowedValues ?? [])));
    } else {
      for (const b of errs) if (b.keyword === 'type') types.push(...String(b.params.type).split(','));
    }
  }
  const uniqueTypes = [...new Set(types)];
  if (values.length && uniqueTypes.every((t) => t === 'null'))
    return { path, message: oneOf([...new Set([...values, ...(uniqueTypes.length ? [null] : [])])]) };
  const phrases = [...new Set(values)].map(showValue).concat(uniqueTypes);
  return { path, message: phrases.length ? `must be ${phrases.join(' or ')}` : (e.message ?? 'is not valid') };
}

/**
 * Ajv's errors for one request part (`body`, `querystring`, `params`, `headers`) as at most 10 details a person
 * can act on: required and unknown fields named, allowed values listed, formats and patterns described in words
 * (no regular expression), the branches of a union folded into one line. No detail repeats the input.
 */
export function validationDetails(errors: ValidationError[], part = 'body'): Detail[] {
  const unions = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf');
  const branchesOf = (u: ValidationError) => errors.filter((b) => b.schemaPath.startsWith(`${u.schemaPath}/`));
  const inUnion = (e: ValidationError) => unions.some((u) => u !== e && e.schemaPath.startsWith(`${u.schemaPath}/`));
  const out: Detail[] = [];
  for (const e of errors) {
    if (inUnion(e)) continue;
    const d = unions.includes(e) ? unionDetail(e, branchesOf(e), part) : detailOf(e, part);
    if (!out.some((o) => o.path === d.path && o.message === d.message)) out.push(d);
  }
  return out.slice(0, 10);
}

/** Whether `err` (or its cause) is a PostgreSQL data exception: SQLSTATE class 22 (NUL in text, a number out of range, bad text for a type, …). */
export function isDataException(err: unknown): boolean {
  for (let e: any = err, i = 0; e && typeof e === 'object' && i < 4; e = e.cause, i++) {
    if (typeof e.code === 'string' && /^22[0-9A-Z]{3}$/.test(e.code) && ('severity' in e || 'routine' in e))
      return true;
  }
  return false;
}

const internal = (req: FastifyRequest) => ({
  error: 'internal_error',
  message: 'Something went wrong on our side; the request id helps us find it.',
  request_id: req.id,
});

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * Install the error and not-found handlers on the root instance. Every answer is the envelope
 * `{error, message, ...fields}`; none repeats the request's URL, body or a driver's message.
 * - AppError → its status, code, message and fields.
 * - Validation → 400 `invalid_request` with `details` (`validationDetails`).
 * - Fastify's errors (FASTIFY_CODES) → their mapped answer; other 4xx → a code for the status.
 * - PostgreSQL data exceptions (SQLSTATE 22xxx) and malformed percent-encoding (URIError) → 400
 *   `invalid_request`: a value of the request the database or the decoder refused (the safety net behind
 *   input.ts; logged as a warning so a server-side cause is still seen).
 * - Anything else → 500 `internal_error` with the request id; the cause is logged.
 * - No route for the path → 404 `not_found` (or, for a browser's page request, what `opts.page` answers: the web
 *   UI's own not-found page); a route for the path with another method → 405 `method_not_allowed` with an
 *   `Allow` header.
 */
export function installErrorHandling(app: FastifyInstance, opts: { page?: PageFallback } = {}): void {
  app.setErrorHandler((err: FastifyError | AppError, req: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof AppError) {
      if (err.statusCode >= 500) req.log.error({ err }, 'request failed');
      return reply.status(err.statusCode).send({ error: err.code, message: err.message, ...err.fields });
    }
    const fe = err as FastifyError;
    if (fe.validation) {
      const details = validationDetails(fe.validation as ValidationError[], fe.validationContext ?? 'body');
      const first = details[0];
      return reply.status(400).send({
        error: 'invalid_request',
        message: first ? `${first.path}: ${first.message}` : 'The request is not valid.',
        details,
      });
    }
    const known = fe.code ? FASTIFY_CODES[fe.code] : undefined;
    if (known) return reply.status(known[0]).send({ error: known[1], message: known[2] });
    if (isDataException(err)) {
      req.log.warn({ err }, 'the database refused a value of the request');
      return reply.status(400).send({
        error: 'invalid_request',
        message: 'A value in the request cannot be stored: it is out of range or not valid text.',
      });
    }
    if (err instanceof URIError) {
      return reply
        .status(400)
        .send({ error: 'invalid_request', message: 'The request contains malformed percent-encoding.' });
    }
    const status = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
    if (status >= 400 && status < 500) {
      return reply.status(status).send({
        error: STATUS_CODES[status] ?? 'invalid_request',
        message: 'The request could not be processed.',
      });
    }
    req.log.error({ err }, 'unexpected failure');
    return reply.status(500).send(internal(req));
  });
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0];
    let allowed: string[];
    try {
      decodeURIComponent(path);
      allowed = METHODS.filter((m) => app.findRoute({ method: m as any, url: path }));
    } catch {
      return reply.status(400).send({ error: 'invalid_request', message: FASTIFY_CODES.FST_ERR_BAD_URL[2] });
    }
    // A route of this method that answered "not found" itself (reply.callNotFound) is a 404, not a 405.
    if (allowed.length && !allowed.includes(req.method)) {
      return reply
        .status(405)
        .header('allow', allowed.join(', '))
        .send({ error: 'method_not_allowed', message: `This path does not accept ${req.method}.` });
    }
    if (opts.page && !allowed.length && opts.page(req, reply)) return reply;
    return reply.status(404).send({ error: 'not_found', message: 'No route matches this method and path.' });
  });
}

/**
 * What the not-found handler asks before its 404 envelope: true when it has answered the request itself (the web
 * UI answers a browser's unknown page path with the app and status 404), false to leave the envelope.
 */
export type PageFallback = (req: FastifyRequest, reply: FastifyReply) => boolean;

/**
 * Fastify's `frameworkErrors` option: errors the router raises before a route is chosen (a malformed
 * percent-encoding, a path parameter longer than `maxParamLength`), in the envelope and without the URL.
 */
export function frameworkErrors(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', req.id);
  const known = err.code ? FASTIFY_CODES[err.code] : undefined;
  if (known) {
    reply.status(known[0]).send({ error: known[1], message: known[2] });
    return;
  }
  req.log.error({ err }, 'router failure');
  reply.status(500).send(internal(req));
}

/**
 * Fastify's `clientErrorHandler` option: what the HTTP parser refuses before there is a request (headers
 * larger than Node's limit → 431, a request that did not arrive in time → 408, anything unreadable → 400),
 * written on the socket in the envelope, which is then closed.
 */
export function clientErrorHandler(this: FastifyInstance, err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'headers_too_large', 'The request headers are too large.']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'request_timeout', 'The request did not arrive in time.']
        : [400, 'invalid_request', 'The request could not be read.'];
  this.log.debug({ code: err.code }, 'client error');
  if (socket.writable) {
    const body = JSON.stringify({ error: code, message });
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
