/**
 * Health (`/healthz`), readiness (`/readyz`) and the OpenAPI document (`/api/openapi.json`): public, no token.
 * Metrics (`/metrics`): the bearer `METRICS_TOKEN` (docs/operations.md, Metrics).
 */
import { Type } from 'typebox';
import { errors, StringEnum } from '../../http/schemas.ts';
import { SERVICE_VERSION } from '../../lib/version.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import type { SystemService } from './system.service.ts';

const CapabilitySchema = Type.Object({
  name: StringEnum(['ffmpeg', 'ffprobe', 'bubblewrap', 'git', 'yt-dlp', 'docker']),
  present: Type.Boolean(),
  source: Type.Optional(
    StringEnum(['configured', 'system', 'npm'], {
      description: 'configured (FFMPEG_PATH …), the system, or the copy npm install brought',
    }),
  ),
  version: Type.Optional(Type.String()),
  cost: Type.String({ description: 'What does not work without it' }),
  add: Type.String({ description: 'How to add it' }),
});

export function systemRoutes(app: TypedApp, { system }: { system: SystemService }): void {
  app.get(
    '/healthz',
    {
      config: { auth: 'public' },
      schema: {
        hide: true,
        response: {
          200: Type.Object({
            ok: Type.Boolean(),
            version: Type.String({ description: "the service's release: package.json's version" }),
          }),
        },
      },
    },
    async () => ({ ok: true, version: SERVICE_VERSION }),
  );

  app.get(
    '/readyz',
    {
      config: { auth: 'public' },
      schema: {
        summary: 'Readiness: database reachable and migrations applied; optional dependencies in checks',
        tags: ['system'],
        security: [],
        response: {
          200: Type.Object({
            ok: Type.Boolean(),
            database: Type.String(),
            vector_search: Type.String(),
            checks: Type.Object(
              {
                breach: StringEnum(['ok', 'degraded', 'off'], {
                  description:
                    'Breached-password range API: degraded while it cannot be reached (new passwords are accepted unchecked), off when BREACH_CHECK_URL=off',
                }),
              },
              { description: 'Optional dependencies; a degraded one does not make the service unready' },
            ),
            capabilities: Type.Array(CapabilitySchema, {
              description:
                'Optional tools of the machine (ffmpeg, ffprobe, bubblewrap, git, yt-dlp, docker): a missing one does not make the service unready. Empty until the first check has finished (capabilities_checked)',
            }),
            capabilities_checked: Type.Boolean({
              description:
                'false for the moment after a start while the tools are first checked (readiness does not wait for them): capabilities is then empty',
            }),
          }),
          503: errors(503)[503],
        },
      },
    },
    async (_req, reply) => {
      const r = await system.readiness();
      if (r.ok) return r;
      return reply.status(503).send({
        error: 'not_ready',
        message:
          r.reason === 'migrations_pending' ? 'Database migrations are pending.' : 'The database cannot be reached.',
      });
    },
  );

  app.get(
    '/metrics',
    {
      // The token is checked by the service (METRICS_TOKEN), not by the users' auth hook.
      config: { auth: 'public' },
      schema: { hide: true },
    },
    async (req, reply) => {
      const m = await system.metrics(req.headers.authorization);
      return reply.type(m.contentType).send(m.text);
    },
  );

  app.get('/api/openapi.json', { config: { auth: 'public' }, schema: { hide: true } }, async () => app.swagger());
}
