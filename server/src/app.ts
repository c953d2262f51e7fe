/**
 * buildApp(deps): the Fastify instance with every area's routes registered over the services of the
 * composition root. `main.ts` and the tests build it; `routes-cli.ts` builds it without a database to list
 * the routes. Only the entry points import this file.
 */
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import crypto from 'node:crypto';
import { SerializerSelector, type Options as SerializerOptions } from '@fastify/fast-json-stringify-compiler';
import { clientErrorHandler, frameworkErrors, installErrorHandling } from './http/errors.ts';
import { installInputChecks } from './http/input.ts';
import { installAuth } from './http/auth.ts';
import { installAuthorization } from './http/authorize.ts';
import { installThrottle } from './http/throttle.ts';
import { installDrainOnClose } from './http/drain.ts';
import { securityHeadersSetter } from './http/security-headers.ts';
import type { AppDeps } from './deps.ts';
import { redactUrl } from './http/logging.ts';
import { installOperationIds, openApiOptions } from './http/openapi.ts';
import { ErrorSchema, namedSchemaList } from './http/schemas.ts';
import { lazyCompiler } from './lib/lazy-compile.ts';
import { registerRoutes } from './modules/routes.ts';
import { pageFallback } from './modules/webui/webui.routes.ts';
import { createServices, type Services } from './services.ts';

export type App = FastifyInstance;

declare module 'fastify' {
  interface FastifyInstance {
    /** Every registered route as `METHOD PATH` (HEAD omitted), in registration order. */
    routeList: string[];
  }
}

/**
 * Build the Fastify app over the infrastructure `deps`: plugins, authentication, every area's routes with
 * the services of the composition root (built here unless given), and the lifecycle hooks.
 */
export async function buildApp(
  deps: AppDeps,
  opts: { logger?: boolean | object; loggerInstance?: any; services?: Services } = {},
): Promise<App> {
  const services = opts.services ?? createServices(deps);
  const idPrefix = crypto.randomBytes(6).toString('base64url');
  let idSeq = 0;
  const app = Fastify({
    ...(opts.loggerInstance ? { loggerInstance: opts.loggerInstance } : { logger: opts.logger ?? false }),
    trustProxy: deps.config.trustProxy,
    // One access-log line per request (onResponse below) instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 1024 * 1024,
    // Start-up steps (migrations, the help index, leases) may take longer than Fastify's 10 s on a small or busy
    // machine; a slow start is not a failed one.
    pluginTimeout: 120_000,
    // The caller's X-Request-Id when it is sane, else this instance's random prefix and a counter: unique across
    // instances, and cheaper per request than a random UUID.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[A-Za-z0-9._-]{1,64}$/.test(given)
        ? given
        : `${idPrefix}-${(++idSeq).toString(36)}`;
    },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
    // The router's and the HTTP parser's own refusals, in the envelope (http/errors.ts).
    frameworkErrors,
    clientErrorHandler,
    // Response serializers are compiled on a route's first answer, not at start (lib/lazy-compile.ts).
    schemaController: {
      compilersFactory: {
        buildSerializer: (externalSchemas: unknown, options: unknown) =>
          lazyCompiler(SerializerSelector()(externalSchemas, options as SerializerOptions)),
      },
    },
  });
  const routeList: string[] = [];
  app.decorate('routeList', routeList);
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const m of methods) if (m !== 'HEAD') routeList.push(`${m} ${route.url}`);
  });
  // Traces (opt-in, lib/tracing.ts): registered before the other hooks and the routes, so it sees them all.
  const tracing = await deps.tracing;
  if (tracing) {
    await app.register(tracing.plugin);
    app.addHook('onClose', async () => {
      await tracing.shutdown();
    });
  }
  // The request id and the browser's protections (CSP, framing, referrer, HSTS over https, …;
  // http/security-headers.ts) on every answer, in one hook.
  const securityHeaders = securityHeadersSetter();
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    securityHeaders(req, reply);
    done();
  });
  const { metrics } = deps;
  app.addHook('onResponse', (req, reply, done) => {
    // The route's pattern, never the raw path (a label per id would grow without bound).
    metrics.request(req.method, req.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    req.log.info(
      {
        method: req.method,
        url: redactUrl(req.url),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        user: req.actor?.id,
      },
      'request',
    );
    done();
  });
  // A browser's unknown page path answers the web UI (its own not-found page), other unknown paths the envelope.
  installErrorHandling(app, { page: pageFallback(services.webui) });
  // JSON depth, NUL/surrogates/control characters, the validator over prepared schemas (http/input.ts).
  installInputChecks(app);
  // The OpenAPI document: the shared error component, an operationId per route, then the plugin.
  app.addSchema(ErrorSchema);
  for (const schema of namedSchemaList()) app.addSchema(schema);
  installOperationIds(app);
  await app.register(swagger, openApiOptions);
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/api/reference')) route.config = { ...(route.config as object), auth: 'public' };
  });
  await app.register(swaggerUi, { routePrefix: '/api/reference', uiConfig: { docExpansion: 'list' } });
  // @fastify/multipart is registered only in the scopes of the upload routes (http/multipart.ts).
  installAuth(app, {
    db: deps.db,
    tokens: deps.tokens,
    operatorEmail: deps.config.operatorEmail,
    userCache: deps.userCache,
    accessTokens: services.tokens.verifier,
  });
  // Authorization before the body is read or validated: project access and route checks (http/authorize.ts).
  installAuthorization(app, { access: deps.access });
  // Rate limits of the routes registered below, counted in the database (http/throttle.ts).
  await installThrottle(app, {
    store: services.throttle.Store,
    clear: services.throttle.clear,
    limits: deps.config.rateLimits,
    log: deps.log,
  });
  registerRoutes(app.withTypeProvider<TypeBoxTypeProvider>(), services);
  installDrainOnClose(app);
  app.addHook('onReady', async () => {
    await services.lifecycle.start();
  });
  app.addHook('onClose', async () => {
    await services.lifecycle.stop();
  });
  return app;
}
