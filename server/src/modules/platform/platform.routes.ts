/**
 * Platform settings routes (docs/ARCHITECTURE.md, Platform settings and their audit): list, set, unset, test, restart,
 * audit.
 */
import type { FastifyRequest } from 'fastify';
import type { TypedApp } from '../../http/typed-app.ts';
import { requireActor } from '../../http/auth.ts';
import { errors } from '../../http/schemas.ts';
import {
  AuditList,
  AuditQuery,
  NameParam,
  RestartAnswer,
  SetBody,
  SettingItem,
  SettingsList,
  TestAnswer,
} from './platform.schemas.ts';
import type { PlatformService } from './platform.service.ts';

const meta = (req: FastifyRequest) => ({ ip: req.ip ?? null, userAgent: req.headers['user-agent'] ?? null });

export function platformRoutes(app: TypedApp, { platform }: { platform: PlatformService }): void {
  const tags = ['platform'];
  const config = { auth: 'admin' as const };
  app.get(
    '/api/crm/platform/settings',
    {
      config,
      schema: {
        tags,
        summary: 'The managed platform secrets: previews and lengths, never the values',
        response: { 200: SettingsList, ...errors(401, 403) },
      },
    },
    async (req) => platform.list(requireActor(req)),
  );
  app.put(
    '/api/crm/platform/settings/:name',
    {
      config,
      schema: {
        tags,
        summary: 'Rotate a platform secret (written sealed together with its audit entry)',
        description:
          'Names outside the allow-list, CRM_SECRET and SECRET_ENCRYPTION_KEY answer 400; every instance uses the new value on its next request.',
        params: NameParam,
        body: SetBody,
        response: { 200: SettingItem, ...errors(400, 401, 403) },
      },
    },
    async (req) => platform.set(requireActor(req), req.params.name, req.body.value, meta(req)),
  );
  app.delete(
    '/api/crm/platform/settings/:name',
    {
      config,
      schema: {
        tags,
        summary: 'Unset a platform secret (removed from the store together with its audit entry)',
        description:
          'Every instance stops using it on its next request (the e-mail API key: mail goes over SMTP or to the outbox; the identity provider client: the sign-in button disappears). Names outside the allow-list answer 400.',
        params: NameParam,
        response: { 200: SettingItem, ...errors(400, 401, 403) },
      },
    },
    async (req) => platform.unset(requireActor(req), req.params.name, meta(req)),
  );
  app.post(
    '/api/crm/platform/settings/:name/test',
    {
      config,
      schema: {
        tags,
        summary: 'Test a platform secret against its vendor (8 s)',
        description:
          'OAuth client ids are checked on the vendor’s authorization page and the e-mail key on its API; OAuth client secrets cannot be tested alone: 501 not_testable.',
        params: NameParam,
        response: { 200: TestAnswer, ...errors(400, 401, 403, 501) },
      },
    },
    async (req) => platform.test(requireActor(req), req.params.name, meta(req)),
  );
  app.post(
    '/api/crm/platform/settings/:name/restart',
    {
      config,
      schema: {
        tags,
        summary: 'Restart what is bound to a platform secret',
        params: NameParam,
        response: { 200: RestartAnswer, ...errors(400, 401, 403) },
      },
    },
    async (req) => platform.restart(requireActor(req), req.params.name, meta(req)),
  );
  app.get(
    '/api/crm/platform/audit',
    {
      config,
      schema: {
        tags,
        summary: 'The append-only audit of platform secrets, newest first',
        querystring: AuditQuery,
        response: { 200: AuditList, ...errors(400, 401, 403) },
      },
    },
    async (req) => platform.audit(requireActor(req), req.query),
  );
}
