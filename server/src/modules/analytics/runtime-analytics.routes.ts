/**
 * Admin analytics of the worker runtime: response latency and the model cascade (docs/ARCHITECTURE.md, Admin
 * analytics).
 */
import { Type } from 'typebox';
import { requireActor } from '../../http/auth.ts';
import { errors, Nullable } from '../../http/schemas.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import type { RuntimeAnalytics } from './runtime-analytics.service.ts';

const Stage = Type.Object({ p50: Nullable(Type.Integer()), p90: Nullable(Type.Integer()), n: Type.Integer() });

export function runtimeAnalyticsRoutes(app: TypedApp, { analytics }: { analytics: RuntimeAnalytics }): void {
  const admin = { auth: 'admin' as const };
  const tags = ['analytics'];
  app.get(
    '/api/crm/analytics/response-latency',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Agent run latency by stage (nearest-rank p50/p90)',
        querystring: Type.Object({
          days: Type.Integer({
            minimum: 1,
            maximum: 90,
            default: 7,
            description: 'the window: the last N days (1–90, default 7)',
          }),
        }),
        response: {
          200: Type.Object({
            windowDays: Type.Integer(),
            sampleSize: Type.Integer(),
            stages: Type.Object({ queue_ms: Stage, prep_ms: Stage, gen_ms: Stage, total_ms: Stage }),
          }),
          ...errors(400, 401, 403),
        },
      },
    },
    async (req) => analytics.responseLatency(requireActor(req), req.query.days),
  );
  app.get(
    '/api/crm/analytics/cascade',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Model cascade: runs started on a cheaper tier, escalations by class, model calls and tokens by model',
        querystring: Type.Object({
          days: Type.Integer({
            minimum: 1,
            maximum: 90,
            default: 14,
            description: 'the window: the last N days (1–90, default 14)',
          }),
        }),
        response: {
          200: Type.Object({
            windowDays: Type.Integer(),
            applied: Type.Integer(),
            escalated: Type.Integer(),
            escalationReasons: Type.Record(Type.String(), Type.Integer()),
            byModel: Type.Array(
              Type.Object({ model: Type.String(), turns: Type.Integer(), total_tokens: Type.Integer() }),
            ),
          }),
          ...errors(400, 401, 403),
        },
      },
    },
    async (req) => analytics.cascade(requireActor(req), req.query.days),
  );
}
