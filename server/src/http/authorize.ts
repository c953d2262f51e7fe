/**
 * Authorization before validation, decided once in the request pipeline (docs/ARCHITECTURE.md, HTTP conventions).
 * Fastify runs `onRequest` (authentication, http/auth.ts: 401, and 403 for `config.auth: 'admin'`), then
 * `preParsing`, then reads the body, then `preValidation` and the schema validation (400). This `preParsing` hook
 * (on the routes that need it) decides, before a byte of the body is read or validated:
 *  - a project-scoped route (its path names the project as `:name` under `/api/crm/projects/`, or as `:project`
 *    under `/api/cli/` and `/api/mcp/`): the caller must have access to that project (owner or admin), else 403
 *    `forbidden` or 404 `project_not_found`, as the service's own first line would answer;
 *  - a route with `config.authorize`: that check (e.g. the payment provider's `X-Token`), else its error.
 * So a request without a token answers 401, another tenant's 403/404 and a caller lacking a role 403, whatever
 * its body; the services keep their own checks as well.
 */
import type { FastifyInstance, FastifyRequest, preParsingHookHandler } from 'fastify';
import type { Actor } from './auth.ts';
import { findTextProblem } from './input.ts';
import { hooksOf } from './route-hooks.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * A check of the caller that needs no body, run before the body is read and validated (e.g. a provider's
     * signature header). Throws the answer (401, 403, 503…).
     */
    authorize?: (req: FastifyRequest) => Promise<void>;
    /** The path parameter that names the project (set for project-scoped paths by `installAuthorization`). */
    projectParam?: string;
  }
}

/** Whether a path's project name is fit to look up (1–200 characters, no text the input checks refuse). */
const lookable = (name: unknown): name is string =>
  typeof name === 'string' && name.length > 0 && name.length <= 200 && !findTextProblem(name, 'params', 'url');

/**
 * The path parameter naming the project of a route, or undefined when its path names none. Pure.
 * `/api/crm/projects/:name/…` → `name`; `/api/cli/…/:project/…` and `/api/mcp/…/:project/…` → `project`.
 */
export function projectParamOf(url: string): string | undefined {
  if (/^\/api\/crm\/projects\/:name(\/|$)/.test(url)) return 'name';
  if (/^\/api\/(cli|mcp)\/.*\/:project(\/|$)/.test(url)) return 'project';
  return undefined;
}

/**
 * Install the authorization step (see the module comment) on the root instance, before the routes.
 * @param deps.access resolves a project for a caller (access/access.ts `authorize`), throwing 403 or 404.
 */
export function installAuthorization(
  app: FastifyInstance,
  deps: { access: { authorize(actor: Actor, name: string): Promise<unknown> } },
): void {
  const check: preParsingHookHandler = async (req, _reply, payload) => {
    const config = req.routeOptions.config;
    if (config?.authorize) await config.authorize(req);
    const param = config?.projectParam;
    if (param && req.actor && config.auth !== 'public') {
      const name = (req.params as Record<string, unknown> | undefined)?.[param];
      // A malformed name is left to the input checks and validation (400); no project has it.
      // The answer is kept for the service's own first check of this request (access.ts `authorize`).
      if (lookable(name)) await deps.access.authorize(req.actor, name);
    }
    return payload;
  };
  // Only on the routes that have something to check (a project in the path, `config.authorize`), and before their
  // own preParsing hooks: the others run no hook at all for it (one promise less per request).
  app.addHook('onRoute', (route) => {
    const param = projectParamOf(route.url);
    if (param) route.config = { ...(route.config as object), projectParam: param };
    if (!param && !(route.config as { authorize?: unknown } | undefined)?.authorize) return;
    route.preParsing = [check, ...hooksOf(route.preParsing)];
  });
}
