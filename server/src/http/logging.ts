/** Logging: pino options for the server, with no secret, token or password in any line. */

/** A URL as logged: `token=` query values replaced. */
export const redactUrl = (url: string) => url.replace(/([?&]token=)[^&]*/g, '$1[redacted]');

/** Pino options shared by the server: no secrets, tokens or passwords in logs (DESIGN.md house style 10). */
export function loggerOptions(level: string) {
  return {
    level,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'req.headers["x-token"]',
        '*.password',
        '*.token',
        '*.llm_key',
      ],
      censor: '[redacted]',
    },
    serializers: {
      req(req: any) {
        return { method: req.method, url: redactUrl(req.url ?? ''), remoteAddress: req.ip };
      },
    },
  };
}
