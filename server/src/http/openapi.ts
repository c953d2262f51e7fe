/**
 * The OpenAPI document (`GET /api/openapi.json`, reference page `/api/reference`): the options of
 * @fastify/swagger, one `operationId` per operation derived from its method and path, multipart request
 * bodies described from the routes' `multipart` schema, and the shared `Error` component.
 */
import type { FastifyInstance } from 'fastify';
import type { SwaggerOptions } from '@fastify/swagger';
import type { TSchema } from 'typebox';
import { SERVICE_VERSION } from '../lib/version.ts';

declare module 'fastify' {
  interface FastifySchema {
    /**
     * Documentation only: the fields of a `multipart/form-data` request body. The route reads the parts
     * itself (`req.file()`, `req.parts()`); Fastify does not validate them. The document shows them as the
     * operation's request body.
     */
    multipart?: TSchema;
  }
}

const pascal = (s: string) =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');

/**
 * The operationId of `METHOD url`: the method in lower case, then the path's segments in PascalCase with
 * `/api/crm` left out (`/api/auth/…` → `Auth…`, a path outside `/api/` → `Root…`) and each parameter as
 * `By<Name>`. Examples: `GET /api/crm/projects/:name/runs/:id` → `getProjectsByNameRunsById`,
 * `POST /api/auth/login` → `postAuthLogin`, `POST /help/chat` → `postRootHelpChat`. Stable as long as the
 * route's method and path are.
 */
export function operationIdOf(method: string, url: string): string {
  const rest = url.startsWith('/api/crm/')
    ? url.slice('/api/crm'.length)
    : url.startsWith('/api/')
      ? url.slice('/api'.length)
      : `/root${url}`;
  const words = rest
    .split('/')
    .filter(Boolean)
    .map((seg) => (seg.startsWith(':') ? `By${pascal(seg.slice(1))}` : pascal(seg)));
  return method.toLowerCase() + words.join('');
}

/**
 * Give every documented route an operationId (unless it declares its own), derived by `operationIdOf`.
 * Call before the routes are registered.
 * @throws Error at registration when two routes would share an operationId (give one its own).
 */
export function installOperationIds(app: FastifyInstance): void {
  const seen = new Map<string, string>();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.includes('HEAD') || route.schema?.hide) return;
    if (methods.length !== 1)
      throw new Error(`${methods.join(',')} ${route.url}: one method per route, so that each has its own operationId`);
    const operationId = route.schema?.operationId ?? operationIdOf(methods[0], route.url);
    const where = `${methods[0]} ${route.url}`;
    const other = seen.get(operationId);
    if (other && other !== where) throw new Error(`operationId ${operationId} of ${where} is already used by ${other}`);
    seen.set(operationId, where);
    route.schema = { ...route.schema, operationId };
  });
}

/** Options of @fastify/swagger: the document's header, shared components and the per-route transform. */
export const openApiOptions: SwaggerOptions = {
  openapi: {
    openapi: '3.1.0',
    info: {
      title: 'CRM service API',
      version: SERVICE_VERSION,
      license: { name: 'MIT', identifier: 'MIT' },
      description: [
        'Multi-tenant back end that orchestrates teams of AI workers grouped into projects.',
        '',
        'Authentication: `Authorization: Bearer <token>` with the token of `POST /api/auth/login` (or `/register`); streams also accept `?token=<token>`. Routes marked with no security are public.',
        '',
        'Errors: every error answer is JSON `{error, message, ...fields}` (the `Error` schema): `error` is a snake_case code, `message` one sentence; a request that breaks the schema answers 400 `invalid_request` with `details:[{path, message}]`.',
        '',
        'Projects are named by their technical name (`:name`), unique across the service. The repository documents the API further in docs/api.md and the configuration in docs/configuration.md.',
      ].join('\n'),
    },
    // Relative: the document is served by the service it describes, at its public address (APP_URL).
    servers: [{ url: '/', description: 'This service, at the address the document is served from (APP_URL)' }],
    tags: [
      { name: 'auth', description: 'Registration, login, e-mail verification, passwords, the waitlist' },
      { name: 'account', description: "The caller's settings, usage and trial" },
      { name: 'admin', description: 'Invites, waitlist, users, outbox (administrators)' },
      { name: 'projects', description: 'Projects: creation, details, configuration, rules, logs, metrics, icon' },
      { name: 'workers', description: 'Workers, presets, templates, bots, avatars, messages and agent runs' },
      { name: 'chat', description: 'Streamed chat with a worker, history, the active role' },
      { name: 'issues', description: "A project's issues, for the web UI and for workers (/api/mcp)" },
      { name: 'skills', description: 'Global and project skills, forks, versions and offered updates' },
      { name: 'wiki', description: "A project's wiki pages" },
      { name: 'files', description: "A project's working directory" },
      { name: 'pins', description: 'Pinned notes, learnings, the knowledge graph' },
      { name: 'knowledge', description: 'Semantic search (RAG) and project memory' },
      { name: 'onboarding', description: 'First-project setup and the onboarding checklist' },
      { name: 'help', description: 'The help assistant' },
      { name: 'docs', description: 'The public user guide' },
      { name: 'analytics', description: 'Runtime analytics (administrators)' },
      { name: 'system', description: 'Readiness' },
      { name: 'billing', description: 'Plans, checkout, cancellation and the payment provider callback' },
      {
        name: 'cli',
        description: 'The command-line client `arc`: devices, sessions, transcripts, install, device link',
      },
      { name: 'cloud', description: "The caller's cloud container: provisioning, SSH, log, terminal, the waitlist" },
      { name: 'feedback', description: 'Feedback reports and translation suggestions' },
      { name: 'mcp', description: "The MCP server (/mcp) and a project's outside MCP servers" },
      { name: 'notes', description: 'Notes with their sources (files, links, recordings) and note chat' },
      { name: 'platform', description: 'Platform secrets: rotation, tests, restarts and their audit (administrators)' },
      { name: 'privacy', description: "Erasing the caller's account and exporting its data" },
      { name: 'sage', description: 'The skill catalog: scouting, installing, reviews and benchmarks' },
      { name: 'transcripts', description: 'Recordings transcribed and summarized, with their progress' },
      { name: 'voice', description: 'Speech to text for dictation' },
      { name: 'web', description: "The web UI's translation catalogs" },
    ],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
    security: [{ bearer: [] }],
  },
  // Shared schemas (`app.addSchema`, schemas with an `$id`) are named by their id: `components.schemas.Error`.
  refResolver: {
    buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
  },
  // Error answers are JSON whatever the route produces when it succeeds (a stream, a ZIP file).
  transformObject: (documents) => {
    const doc = 'openapiObject' in documents ? documents.openapiObject : documents.swaggerObject;
    for (const item of Object.values((doc as { paths?: Record<string, Record<string, any>> }).paths ?? {}))
      for (const op of Object.values(item)) {
        for (const [status, response] of Object.entries<any>(op?.responses ?? {})) {
          if (Number(status) < 400 || !response?.content || response.content['application/json']) continue;
          const [first] = Object.values<any>(response.content);
          response.content = { 'application/json': first };
        }
      }
    return doc;
  },
  // A route's documented multipart fields become its request body (beside its JSON body when it takes both).
  transform: ({ schema, url }) => {
    if (!schema?.multipart) return { schema, url };
    const { multipart, ...rest } = schema;
    const content: Record<string, { schema: unknown }> = { 'multipart/form-data': { schema: multipart } };
    if (rest.body) content['application/json'] = { schema: rest.body };
    return { schema: { ...rest, body: { content } }, url };
  },
};
