/**
 * buildApp(deps): the Fastify instance with every module registered. `main.ts` and the tests build it;
 * `routes-cli.ts` builds it without a database to list the routes.
 */
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyServerOptions,
  type RawServerDefault,
} from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import multipart from '@fastify/multipart';
import crypto from 'node:crypto';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS with a default export: take the function under either interop.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv,
) => Ajv;
import type { Kysely } from 'kysely';
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import type { DB } from './db/types.ts';
import { installErrorHandling } from './http/errors.ts';
import { createUserCache, installAuth, type UserCache } from './http/auth.ts';
import { createTokens, type Tokens } from './http/tokens.ts';
import { createSealer, type Sealer } from './secrets/crypto.ts';
import { createSecretStore, type SecretStore } from './secrets/secret-store.ts';
import type { Keys } from './secrets/keys.ts';
import { createMailer, type Mailer } from './providers/mail/mail.ts';
import { createBreachChecker, type BreachChecker } from './providers/breach/breach.ts';
import { createBlobStorage, type BlobStorage } from './storage/storage.ts';
import { createActivityLog, type ActivityLog } from './lib/activity.ts';
import { createAccess, type Access } from './access/access.ts';
import { createJobQueue, type JobQueue } from './jobs/queue.ts';
import { createDocSources, type DocSources } from './lib/doc-sources.ts';
import { createLlmKeys, createLlmProvider, type LlmKeys, type LlmProvider } from './providers/llm/index.ts';
import { createEmbedder, type Embedder } from './providers/embeddings/index.ts';
import { modules } from './modules/index.ts';
import type { ToolRegistry } from './modules/runtime/tools.ts';
import type { AgentPorts } from './modules/runtime/ports.ts';
import { createBuiltinEngine, type AgentEngine } from './modules/runtime/engine.ts';
import { createDefaultToolRegistry } from './modules/runtime/builtin-tools.ts';

/** Everything a module may use; wired once here (DESIGN.md house style 4). */
export interface AppDeps {
  config: Config;
  database: Database;
  db: Kysely<DB>;
  keys: Keys;
  sealer: Sealer;
  secrets: SecretStore;
  tokens: Tokens;
  mailer: Mailer;
  breach: BreachChecker;
  storage: BlobStorage;
  activity: ActivityLog;
  access: Access;
  jobs: JobQueue;
  docSources: DocSources;
  /** Short-lived cache of the auth hook's user rows; call `invalidate(id)` after changing a user. */
  userCache: UserCache;
  /** The configured LLM vendor (Anthropic Messages API or OpenAI-compatible). */
  llm: LlmProvider;
  /** Which key an LLM call uses: the user's own or the platform key. */
  llmKeys: LlmKeys;
  /** The agent's tools (worker runtime); areas add theirs with `agentTools.register`. */
  agentTools: ToolRegistry;
  /** Ports the agent's tools call (issues, skills, wiki, search); the owning modules set them at registration. */
  agentPorts: AgentPorts;
  /** The engine that executes agent runs (built-in model loop). */
  agentEngine: AgentEngine;
  /** Text embedder of the semantic index: OpenAI-compatible `EMBEDDINGS_URL`, or the built-in local one. */
  embeddings: Embedder;
}

export type App = FastifyInstance;

declare module 'fastify' {
  interface FastifyInstance {
    /** Every registered route as `METHOD PATH` (HEAD omitted), in registration order. */
    routeList: string[];
  }
}
export type TypedApp = FastifyInstance<
  RawServerDefault,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** A module: registers its routes (and may start background work) with the shared deps. */
export type Module = (app: TypedApp, deps: AppDeps) => Promise<void> | void;

/**
 * Build the default dependencies over an open database. Tests pass `overrides` to swap a provider
 * (e.g. a breach checker pointed at a local stand-in); nothing in `src/` branches on tests.
 */
export function createDeps(
  config: Config,
  database: Database,
  keys: Keys,
  log: FastifyServerOptions['loggerInstance'] | any,
  overrides: Partial<AppDeps> = {},
): AppDeps {
  const sealer = overrides.sealer ?? createSealer(keys.secretEncryptionKey);
  const db = database.db;
  const secrets = overrides.secrets ?? createSecretStore(db, sealer);
  const llm = overrides.llm ?? createLlmProvider(config);
  return {
    config,
    database,
    db,
    keys,
    sealer,
    secrets,
    tokens: overrides.tokens ?? createTokens(keys.crmSecret),
    mailer:
      overrides.mailer ??
      createMailer({ db, appUrl: config.appUrl, from: config.mailFrom, smtpUrl: config.smtpUrl, log }),
    breach: overrides.breach ?? createBreachChecker(config.breachCheckUrl),
    storage: overrides.storage ?? createBlobStorage(config.dataDir),
    activity: overrides.activity ?? createActivityLog(db, log),
    access: overrides.access ?? createAccess(db, config.dataDir),
    jobs: overrides.jobs ?? createJobQueue(database, log),
    docSources: overrides.docSources ?? createDocSources(),
    userCache: overrides.userCache ?? createUserCache(),
    llm,
    llmKeys: overrides.llmKeys ?? createLlmKeys({ db, sealer, secrets }),
    agentTools: overrides.agentTools ?? createDefaultToolRegistry(),
    agentPorts: overrides.agentPorts ?? {},
    agentEngine: overrides.agentEngine ?? createBuiltinEngine(llm),
    embeddings: overrides.embeddings ?? createEmbedder(config),
  };
}

const redactUrl = (url: string) => url.replace(/([?&]token=)[^&]*/g, '$1[redacted]');

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

export async function buildApp(
  deps: AppDeps,
  opts: { logger?: boolean | object; loggerInstance?: any } = {},
): Promise<App> {
  const app = Fastify({
    ...(opts.loggerInstance ? { loggerInstance: opts.loggerInstance } : { logger: opts.logger ?? false }),
    trustProxy: deps.config.trustProxy,
    // One access-log line per request (onResponse below) instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 1024 * 1024,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[A-Za-z0-9._-]{1,64}$/.test(given) ? given : crypto.randomUUID();
    },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
  });
  const routeList: string[] = [];
  app.decorate('routeList', routeList);
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const m of methods) if (m !== 'HEAD') routeList.push(`${m} ${route.url}`);
  });
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });
  app.addHook('onResponse', (req, reply, done) => {
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
  installErrorHandling(app);
  // Query strings, params and headers arrive as text and are coerced to their schema types; JSON bodies
  // are not: `{"count":"5"}` for an integer is a 400, not a silent conversion.
  const ajvFor = (coerceTypes: false | 'array') => {
    const ajv = new Ajv({ coerceTypes, useDefaults: true, removeAdditional: false, allErrors: false, strict: false });
    addFormats(ajv);
    return ajv;
  };
  const ajvBody = ajvFor(false);
  const ajvText = ajvFor('array');
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? ajvBody : ajvText).compile(schema));
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'CRM service API',
        version: '0.1.0',
        description:
          'Multi-tenant back end that orchestrates teams of AI workers grouped into projects. Errors use the envelope {error, message, ...fields}.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
      security: [{ bearer: [] }],
    },
  });
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/api/reference')) route.config = { ...(route.config as object), auth: 'public' };
  });
  await app.register(swaggerUi, { routePrefix: '/api/reference', uiConfig: { docExpansion: 'list' } });
  await app.register(multipart, {
    limits: { fileSize: 100 * 1024 * 1024, files: 50, fields: 50, fieldSize: 1024 * 1024 },
  });
  installAuth(app, {
    db: deps.db,
    tokens: deps.tokens,
    operatorEmail: deps.config.operatorEmail,
    userCache: deps.userCache,
  });
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  for (const mod of modules) await mod(typed, deps);
  app.addHook('onReady', async () => {
    await deps.jobs.start();
  });
  app.addHook('onClose', async () => {
    await deps.jobs.stop();
  });
  return app;
}
