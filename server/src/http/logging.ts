/**
 * Logging: pino options for the server, with no secret, token, password, hash or SQL parameter in any line.
 *
 * Two layers: the `err` serializer keeps only what explains a failure (type, message, code, stack, and the
 * same of its cause) and drops everything else a driver attaches — PostgreSQL errors carry the statement's
 * `params` (a password hash, an e-mail, a token) and its `query`; `censorSecrets` (pino's `formatters.log`) then
 * replaces the values of secret-named keys anywhere in the first levels of every line. (pino's `redact` with
 * wildcard paths for the same keys — `*.password`, `*.*.password`, … — measured 58 µs per access-log line
 * against 2 µs here, so it covers only the request headers' fixed paths.)
 */

/** Query parameters whose values are never logged. */
const SECRET_QUERY = /([?&](?:token|access_token|api_key|key|password|secret)=)[^&]*/gi;

/**
 * A URL as logged: the values of `token=` (and other secret-named query parameters) replaced. A URL without `=`
 * (most; this runs for every access-log line) cannot match and is returned as it is, without running the expression.
 */
export const redactUrl = (url: string) => (url.includes('=') ? url.replace(SECRET_QUERY, '$1[redacted]') : url);

/** Keys whose values never reach a log line, wherever they appear (compared without case). */
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

const SECRET = new Set(SECRET_KEYS.map((k) => k.toLowerCase()));
/** Whether a key is secret, remembered per key as written (a log line's keys are few and recur; bounded). */
const secretByKey = new Map<string, boolean>();
const isSecretKey = (key: string): boolean => {
  let secret = secretByKey.get(key);
  if (secret === undefined) {
    secret = SECRET.has(key.toLowerCase());
    if (secretByKey.size < 10_000) secretByKey.set(key, secret);
  }
  return secret;
};
const CENSOR = '[redacted]';
const isPlain = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' &&
  v !== null &&
  (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null);

/**
 * The log object with the value of every secret-named key (SECRET_KEYS, any case) replaced by `[redacted]`, in
 * plain objects and arrays up to `depth` levels down. Copies only along the paths it changes; the caller's
 * objects are never modified. Errors are left to the `err` serializer.
 */
export function censorSecrets<T>(value: T, depth = 4): T {
  if (depth < 0) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = censorSecrets(value[i], depth - 1);
      if (v !== value[i]) (out ??= value.slice())[i] = v;
    }
    return (out ?? value) as T;
  }
  if (!isPlain(value)) return value;
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(value)) {
    const v = value[key];
    const next = isSecretKey(key)
      ? v === undefined
        ? v
        : CENSOR
      : typeof v === 'object' && v !== null
        ? censorSecrets(v, depth - 1)
        : v;
    if (next !== v) (out ??= { ...value })[key] = next;
  }
  return (out ?? value) as T;
}

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
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-token"]'], censor: CENSOR },
    formatters: { log: (obj: Record<string, unknown>) => censorSecrets(obj) },
    serializers: {
      req(req: any) {
        return { method: req.method, url: redactUrl(req.url ?? ''), remoteAddress: req.ip };
      },
      err: serializeError,
    },
  };
}
