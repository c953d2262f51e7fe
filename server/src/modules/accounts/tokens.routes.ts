/**
 * Access-token routes (docs/api.md, Access tokens): create, list and revoke the caller's tokens. A session
 * only: an access token cannot manage tokens.
 */
import type { FastifyRequest } from 'fastify';
import { requireActor } from '../../http/auth.ts';
import { errors, idParam, Ok } from '../../http/schemas.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import type { TokensService } from './tokens.service.ts';
import * as S from './tokens.schemas.ts';

const meta = (req: FastifyRequest) => ({ ip: req.ip, userAgent: req.headers['user-agent'] });

export function tokensRoutes(app: TypedApp, { tokens }: { tokens: TokensService }): void {
  const tags = ['account'];
  const config = { accessToken: 'refused' as const };
  app.post(
    '/api/crm/account/tokens',
    {
      config,
      schema: {
        tags,
        summary: 'Create an access token (shown once)',
        description:
          'A personal access token for programs: `Authorization: Bearer <token>` on any route its scopes allow ' +
          '(`read`: GET and streams; `write`: everything else a user may do; `admin`: an administrator’s ' +
          'reach over projects, administrators only), limited to `project` when set, expiring after ' +
          '`expires_in_days` when set. Never valid for the password, tokens, export or erasure, nor on admin ' +
          'routes. Only its hash is stored. At most 50 live tokens (409 `token_limit`).',
        body: S.CreateTokenBody,
        response: { 201: S.CreatedToken, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => reply.status(201).send(await tokens.create(requireActor(req), req.body, meta(req))),
  );
  app.get(
    '/api/crm/account/tokens',
    {
      config,
      schema: {
        tags,
        summary: 'Your access tokens and device credentials (not revoked), newest first',
        response: { 200: S.TokenList, ...errors(401, 403) },
      },
    },
    async (req) => tokens.list(requireActor(req)),
  );
  app.delete(
    '/api/crm/account/tokens/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Revoke an access token (its next request answers 401)',
        params: idParam('the token id'),
        response: { 200: Ok, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => tokens.revoke(requireActor(req), req.params.id, meta(req)),
  );
}
