/**
 * Privacy routes (docs/ARCHITECTURE.md, Privacy: export, erasure, retention): erase the caller's account, export its
 * data.
 */
import { Type } from 'typebox';
import { requireActor } from '../../http/auth.ts';
import { errors } from '../../http/schemas.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import { EraseAnswer, EraseBody } from './privacy.schemas.ts';
import type { PrivacyService } from './privacy.service.ts';

export function privacyRoutes(app: TypedApp, { privacy }: { privacy: PrivacyService }): void {
  const tags = ['privacy'];
  app.delete(
    '/api/auth/account',
    {
      config: { accessToken: 'refused' },
      schema: {
        tags,
        summary: 'Erase the caller’s account and all its data',
        description:
          'In one transaction: the rows of every owned project area by area, the projects, then the account; ' +
          'events kept in other projects show the actor `[deleted]`. Files under the data directory, vectors ' +
          'of the semantic index, queued jobs and sealed secrets of the account are removed too; clean-ups ' +
          'outside the database are retried in the background and never block the erasure. ' +
          'The body must be `{"confirm": "DELETE MY ACCOUNT"}` exactly (400 `confirmation_required` otherwise).',
        body: EraseBody,
        response: { 200: EraseAnswer, ...errors(400, 401, 404) },
      },
    },
    async (req) => privacy.erase(requireActor(req), req.body.confirm),
  );
  app.get(
    '/api/auth/export',
    {
      config: { accessToken: 'refused' },
      schema: {
        tags,
        summary: 'Download the caller’s data as one JSON file (3 per 24 hours)',
        description:
          'A file `crm-export-<YYYY-MM-DD>.json` with the sections `profile`, `account_settings`, `projects` ' +
          '(each with `workers`, `messages`, `issues` with their activity, `wiki`, `pins`, `skills`, ' +
          '`activity`, and the other areas’ data), `auth_events`, `token_usage`, `arc_help_history`, ' +
          '`export_history`, `onboarding`, `published_skills`, `worker_templates`. Never a password hash, a key ' +
          'or a token. Written while it is read, so a large account streams. The 4th export within 24 hours ' +
          'answers 429 `export_limit` with `retry_at`.',
        produces: ['application/json'],
        response: {
          200: Type.Unsafe<unknown>({ type: 'string', format: 'binary', description: 'the export (application/json)' }),
          ...errors(401, 404, 429),
        },
      },
    },
    async (req, reply) => {
      const { filename, stream } = await privacy.exportData(requireActor(req));
      return reply
        .header('content-type', 'application/json; charset=utf-8')
        .header('content-disposition', `attachment; filename="${filename}"`)
        .header('cache-control', 'no-store')
        .send(stream);
    },
  );
}
