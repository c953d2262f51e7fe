/**
 * Typed errors and the one error handler that renders the envelope of CONTRACT.md §4:
 * `{error: '<snake_case code>', message: '<one human sentence>', ...fields}`.
 * 5xx answers carry the request id and a generic message; the log carries the cause.
 */
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
export class Upstream extends AppError {
  constructor(statusCode: 502 | 503 | 504, code: string, message: string, fields?: Record<string, unknown>) {
    super(statusCode, code, message, fields);
  }
}

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
};

/** Install the error and not-found handlers on the root instance. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | AppError, req: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof AppError) {
      if (err.statusCode >= 500) req.log.error({ err }, 'request failed');
      return reply.status(err.statusCode).send({ error: err.code, message: err.message, ...err.fields });
    }
    const fe = err as FastifyError;
    if (fe.validation) {
      const details = fe.validation.map((v) => ({
        path: `${fe.validationContext ?? 'body'}${v.instancePath || ''}${(v.params as any)?.missingProperty ? `/${(v.params as any).missingProperty}` : ''}`,
        message: v.message ?? 'is invalid',
      }));
      const first = details[0];
      return reply.status(400).send({
        error: 'invalid_request',
        message: first ? `${first.path}: ${first.message}` : 'The request is not valid.',
        details,
      });
    }
    const known = fe.code ? FASTIFY_CODES[fe.code] : undefined;
    if (known) return reply.status(known[0]).send({ error: known[1], message: known[2] });
    const status = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
    if (status >= 400 && status < 500) {
      return reply.status(status).send({
        error: status === 404 ? 'not_found' : 'invalid_request',
        message: 'The request could not be processed.',
      });
    }
    req.log.error({ err }, 'unexpected failure');
    return reply.status(500).send({
      error: 'internal_error',
      message: 'Something went wrong on our side; the request id helps us find it.',
      request_id: req.id,
    });
  });
  app.setNotFoundHandler((req, reply) => {
    reply.status(404).send({ error: 'not_found', message: `No route ${req.method} ${req.url.split('?')[0]}.` });
  });
}
