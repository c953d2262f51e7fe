/**
 * Routes of signing in with the identity provider (docs/api.md, Signing in with the identity provider): the
 * sign-in button's configuration, the flow's start and callback (browser navigations: redirects), and the
 * account's link, status and unlink. Each route translates HTTP to one OIDC service call.
 *
 * A failed start or callback redirects a browser (a request that accepts `text/html`) to the web UI with
 * `#error=<code>`; any other client gets the error envelope with its status (400, 403, 409, 503).
 */
import { Type } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../http/errors.ts';
import { requireActor } from '../../http/auth.ts';
import { DateTime, errors, Nullable } from '../../http/schemas.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import type { CallbackOutcome, OidcService } from './oidc.service.ts';

const meta = (req: FastifyRequest) => ({ ip: req.ip, userAgent: req.headers['user-agent'] });
/** A browser's navigation (it reads the web UI's page), not an API client. */
const wantsHtml = (req: FastifyRequest) => (req.headers.accept ?? '').includes('text/html');
const redirect = { 302: Type.Null({ description: 'a redirect (Location)' }) };

/** Send the browser on, or answer an API client the flow's error. */
function finish(req: FastifyRequest, reply: FastifyReply, out: CallbackOutcome) {
  reply.header('set-cookie', out.clearCookie).header('cache-control', 'no-store');
  if (out.error && !wantsHtml(req)) throw out.error;
  return reply.redirect(out.location, 302);
}

export function oidcRoutes(app: TypedApp, { oidc }: { oidc: OidcService }): void {
  const tags = ['auth'];
  const pub = { auth: 'public' as const };

  app.get(
    '/api/auth/oidc/config',
    {
      config: pub,
      schema: {
        tags,
        security: [],
        summary: 'Whether signing in with the identity provider is offered, and its name',
        response: { 200: Type.Object({ enabled: Type.Boolean(), name: Type.String() }) },
      },
    },
    async () => oidc.publicConfig(),
  );
  app.get(
    '/api/auth/oidc/start',
    {
      config: pub,
      schema: {
        tags,
        security: [],
        summary: 'Start signing in with the identity provider (a redirect to it)',
        description:
          'OpenID Connect authorization code flow with PKCE. `invite_code` is needed only when the sign-in makes a new account; `redirect` is the web UI path to open afterwards. Keeps the flow in a short-lived cookie.',
        querystring: Type.Object({
          invite_code: Type.Optional(Type.String({ maxLength: 64, description: 'an invite code for a new account' })),
          redirect: Type.Optional(Type.String({ maxLength: 500, description: 'a web UI path, e.g. /projects' })),
        }),
        response: { ...redirect, ...errors(400, 503) },
      },
    },
    async (req, reply) => {
      try {
        const { url, cookie } = await oidc.start(req.query);
        return reply.header('set-cookie', cookie).header('cache-control', 'no-store').redirect(url, 302);
      } catch (err) {
        if (!(err instanceof AppError) || !wantsHtml(req)) throw err;
        return reply.redirect(oidc.startFailedLocation(err.code), 302);
      }
    },
  );
  app.get(
    '/api/auth/oidc/callback',
    {
      config: pub,
      schema: {
        tags,
        security: [],
        summary: 'The identity provider sends the browser back here',
        description:
          'Redirects to `{app_url}/login/callback#token=<session token>` (or `#error=<code>`); a link started in the settings goes back to `{app_url}/account?oidc=linked` (or `?oidc_error=<code>`). A flow started before the client was rotated answers 400 `oidc_flow_stale`: start again. A client that does not accept HTML gets the error envelope instead of the redirect.',
        querystring: Type.Object({}, { additionalProperties: true }),
        response: { ...redirect, ...errors(400, 403, 409, 429, 503) },
      },
    },
    async (req, reply) => {
      const query = req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '';
      return finish(req, reply, await oidc.callback(query, req.headers.cookie, meta(req)));
    },
  );

  const accountTags = ['account'];
  app.get(
    '/api/crm/account/oidc',
    {
      schema: {
        tags: accountTags,
        summary: 'The identity provider linked to the account',
        response: {
          200: Type.Object({
            configured: Type.Boolean(),
            name: Type.String(),
            linked: Type.Boolean(),
            identities: Type.Array(
              Type.Object({ issuer: Type.String(), email: Nullable(Type.String()), created_at: DateTime() }),
            ),
            has_password: Type.Boolean(),
          }),
          ...errors(401),
        },
      },
    },
    async (req) => oidc.status(requireActor(req)),
  );
  app.post(
    '/api/crm/account/oidc/link',
    {
      schema: {
        tags: accountTags,
        summary: 'Start linking the identity provider to the account',
        description:
          'Answers where the browser goes (`authorize_url`) and sets the flow cookie; the callback links the identity and returns to `{app_url}/account?oidc=linked`.',
        response: { 200: Type.Object({ authorize_url: Type.String() }), ...errors(401, 503) },
      },
    },
    async (req, reply) => {
      const { authorize_url, cookie } = await oidc.startLink(requireActor(req));
      return reply.header('set-cookie', cookie).send({ authorize_url });
    },
  );
  app.delete(
    '/api/crm/account/oidc',
    {
      schema: {
        tags: accountTags,
        summary: 'Unlink the identity provider (the account must keep a password)',
        response: { 200: Type.Object({ ok: Type.Boolean() }), ...errors(401, 404, 409) },
      },
    },
    async (req) => oidc.unlink(requireActor(req)),
  );
}
