/**
 * Logging: pino options for the server, with no secret, token, password, hash or SQL parameter in any line.
 *
 * Two layers: the `err` serializer keeps only what explains a failure (type, message, code, stack, and the
 * same of its cause) and drops everything else a driver attaches — PostgreSQL errors carry the statement's
 * `params` (a password hash, an e-mail, a token) and its `query`; `redact` then censors secret-named keys at
 * any of the first three levels of every line (`password`, `*.password`, `*.*.password`, …).
 */

/** Query parameters whose values are never logged. */
const SECRET_QUERY = /([?&](?:token|access_token|api_key|key|password|secret)=)[^&]*/gi;

/** A URL as logged: the values of `token=` (and other secret-named query parameters) replaced. */
export const redactUrl = (url: string) => url.replace(SECRET_QUERY, '$1[redacted]');

/** Keys whose values never reach a log line, wherever they appear (up to three levels deep). */
export const SECRET_KEYS = [
  'password',
  'current_password',
  'new_password',
  'password_hash',
  'passwordHash',
  'token',
  'access_token',
  'refresh_token',
  'api_key',
  'apiKey',
  'llm_key',
  'llmKey',
  'llm_key_enc',
  'secret',
  'client_secret',
  'messenger_token',
  'bot_token',
  'authorization',
  'cookie',
  // SQL parameters of a failed statement (the err serializer drops them; this covers other carriers).
  'params',
  'parameters',
];

/** The redaction paths: each secret key at the top level and under one or two wildcards. */
export const redactPaths = ['req.headers["x-token"]', ...SECRET_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`])];

interface LoggedError {
  type: string;
  message: string;
  code?: string;
  stack?: string;
  cause?: LoggedError | string;
}

/**
 * The `err` serializer: an Error (or error-like object) as `{type, message, code?, stack?, cause?}`; every
 * other property (SQL text and parameters, request bodies, AppError fields) is dropped. A string or other
 * value logged under `err` is kept as it is. Causes are followed three levels.
 */
export function serializeError(err: unknown, depth = 0): unknown {
  if (!err || typeof err !== 'object') return err;
  const e = err as Record<string, unknown> & { constructor?: { name?: string } };
  const out: LoggedError = {
    // Database errors (pg, PGlite) have minified or generic class names; say what they are.
    type: typeof e.severity === 'string' ? 'DatabaseError' : String(e.constructor?.name || e.name || 'Error'),
    message: typeof e.message === 'string' ? e.message : String(e.message ?? ''),
  };
  if (typeof e.code === 'string' || typeof e.code === 'number') out.code = String(e.code);
  if (typeof e.stack === 'string') out.stack = e.stack;
  if (e.cause !== undefined && depth < 3) out.cause = serializeError(e.cause, depth + 1) as LoggedError;
  return out;
}

/** Pino options shared by the server: no secrets, tokens, passwords, hashes or SQL parameters in logs. */
export function loggerOptions(level: string) {
  return {
    level,
    redact: { paths: redactPaths, censor: '[redacted]' },
    serializers: {
      req(req: any) {
        return { method: req.method, url: redactUrl(req.url ?? ''), remoteAddress: req.ip };
      },
      err: serializeError,
    },
  };
}
