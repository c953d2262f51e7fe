/** Health, readiness and the OpenAPI document (CONTRACT.md §1 "Our own additions"). */
import { Type } from '@sinclair/typebox';
import { sql } from 'kysely';
import type { Module } from '../../app.ts';
import { migrationsApplied } from '../../db/migrate.ts';

export const systemModule: Module = (app, deps) => {
  app.get(
    '/healthz',
    { config: { auth: 'public' }, schema: { hide: true, response: { 200: Type.Object({ ok: Type.Boolean() }) } } },
    async () => ({ ok: true }),
  );

  app.get(
    '/readyz',
    {
      config: { auth: 'public' },
      schema: {
        summary: 'Readiness: database reachable and migrations applied',
        tags: ['system'],
        security: [],
        response: {
          200: Type.Object({ ok: Type.Boolean(), database: Type.String(), vector_search: Type.String() }),
          503: Type.Object({ error: Type.String(), message: Type.String() }),
        },
      },
    },
    async (_req, reply) => {
      try {
        await sql`select 1`.execute(deps.db);
        if (!(await migrationsApplied(deps.db)))
          return reply.status(503).send({ error: 'not_ready', message: 'Database migrations are pending.' });
        return {
          ok: true,
          database: deps.database.kind,
          vector_search: deps.database.vector ? 'pgvector-hnsw' : 'exact-scan',
        };
      } catch {
        return reply.status(503).send({ error: 'not_ready', message: 'The database cannot be reached.' });
      }
    },
  );

  app.get('/api/openapi.json', { config: { auth: 'public' }, schema: { hide: true } }, async () => app.swagger());
};
