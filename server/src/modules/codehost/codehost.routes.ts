/**
 * Routes of connecting the code host (docs/api.md, Connecting the code host): connect (the authorization address),
 * the OAuth callback (a browser navigation, identified by the flow cookie), status and disconnect.
 */
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import { requireActor } from '../../http/auth.ts';
import { DateTime, errors, Nullable } from '../../http/schemas.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import type { CodehostService } from './codehost.service.ts';

/** A browser's navigation (it reads the web UI's page), not an API client. */
const wantsHtml = (req: FastifyRequest) => (req.headers.accept ?? '').includes('text/html');

export function codehostRoutes(app: TypedApp, { codehost }: { codehost: CodehostService }): void {
  const tags = ['account'];
  app.post(
    '/api/crm/account/codehost/connect',
    {
      schema: {
        tags,
        summary: 'Start connecting the code host (OAuth): where the browser goes',
        description:
          'Sets the flow cookie; the code host sends the browser back to the callback, which stores the token sealed and returns to `{app_url}/account?codehost=connected`.',
        response: { 200: Type.Object({ authorize_url: Type.String() }), ...errors(401, 503) },
      },
    },
    async (req, reply) => {
      const { authorize_url, cookie } = await codehost.connect(requireActor(req));
      return reply.header('set-cookie', cookie).send({ authorize_url });
    },
  );
  app.get(
    '/api/crm/account/codehost/callback',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        security: [],
        summary: 'The code host sends the browser back here',
        description:
          'Redirects to `{app_url}/account?codehost=connected` (or `?codehost_error=<code>`). A connection started before the code host app was rotated answers 400 `codehost_flow_stale`: start again. A client that does not accept HTML gets the error envelope instead of the redirect.',
        querystring: Type.Object({}, { additionalProperties: true }),
        response: { 302: Type.Null({ description: 'a redirect (Location)' }), ...errors(400, 502, 503) },
      },
    },
    async (req, reply) => {
      const query = req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '';
      const out = await codehost.callback(query, req.headers.cookie);
      reply.header('set-cookie', out.clearCookie).header('cache-control', 'no-store');
      if (out.error && !wantsHtml(req)) throw out.error;
      return reply.redirect(out.location, 302);
    },
  );
  app.get(
    '/api/crm/account/codehost',
    {
      schema: {
        tags,
        summary: 'The code host connection of the account',
        response: {
          200: Type.Object({
            configured: Type.Boolean(),
            connected: Type.Boolean(),
            login: Nullable(Type.String()),
            scopes: Nullable(Type.String()),
            connected_at: Nullable(DateTime()),
          }),
          ...errors(401),
        },
      },
    },
    async (req) => codehost.status(requireActor(req)),
  );
  app.delete(
    '/api/crm/account/codehost',
    {
      schema: {
        tags,
        summary: 'Disconnect the code host: the token is revoked there and forgotten',
        response: { 200: Type.Object({ ok: Type.Boolean(), revoked: Type.Boolean() }), ...errors(401, 404) },
      },
    },
    async (req) => codehost.disconnect(requireActor(req)),
  );
}
