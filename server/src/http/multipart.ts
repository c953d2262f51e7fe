/**
 * Multipart bodies (`@fastify/multipart`) only where a route reads them. The plugin adds an `onRequest` hook (a
 * `close` listener on the answer) and an `onResponse` hook (the clean-up of files saved by `saveRequestFiles`) to
 * every route of the instance it is registered on, both async: a promise and a listener per request for every route
 * of the service when registered on the app. So each upload route is declared inside `multipartRoutes`, a plugin
 * scope of its own with the plugin in it (Fastify's encapsulation): its hooks, its `multipart/form-data` parser and
 * its request methods (`req.parts()`, `req.isMultipart()`, …) belong to those routes alone; every other route
 * answers a multipart body 415 `unsupported_media_type`, as any content type it does not take (bench/README.md,
 * "Auth-me", sixth pass).
 */
import multipart from '@fastify/multipart';
import type { TypedApp } from './typed-app.ts';

/** The limits of every multipart body: 100 MB a file, 50 files, 50 fields of at most 1 MB. */
export const MULTIPART_LIMITS = { fileSize: 100 * 1024 * 1024, files: 50, fields: 50, fieldSize: 1024 * 1024 };

/**
 * Declare routes that read multipart bodies: `routes` is called with a plugin scope of `app` that has
 * `@fastify/multipart` (`MULTIPART_LIMITS`) and inherits everything of `app` (hooks, parsers, error handler).
 * The routes are registered when the scope loads (at the app's next `ready`), after the ones declared directly.
 */
export function multipartRoutes(app: TypedApp, routes: (scope: TypedApp) => void): void {
  void app.register(async (scope) => {
    await scope.register(multipart, { limits: MULTIPART_LIMITS });
    routes(scope as unknown as TypedApp);
  });
}
