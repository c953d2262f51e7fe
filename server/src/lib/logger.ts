/**
 * The logger every service receives: pino's method shape (`log.warn(obj, msg)`), so the server's pino
 * instance, Fastify's request logger and a silent test logger all fit.
 */
export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
  child(bindings: object): Logger;
}

/** A logger that drops everything (the routes listing, tests that do not read logs). */
export const silentLogger: Logger = {
  info() {},
  warn() {},
  error() {},
  debug() {},
  child: () => silentLogger,
};
