/** Admin product analytics and the metric writes of clients (docs/ARCHITECTURE.md, Admin analytics). */
import { Type } from 'typebox';
import { requireActor } from '../../http/auth.ts';
import { errors, Ok } from '../../http/schemas.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import * as S from './product-analytics.schemas.ts';
import type { ProductAnalytics } from './product-analytics.service.ts';

const hoursQuery = (max: number, dflt: number) =>
  Type.Object({
    hours: Type.Integer({
      minimum: 1,
      maximum: max,
      default: dflt,
      description: `the window: the last N hours (1–${max}, default ${dflt})`,
    }),
  });
const daysQuery = (max: number, dflt: number) =>
  Type.Object({
    days: Type.Integer({
      minimum: 1,
      maximum: max,
      default: dflt,
      description: `the window: the last N days (1–${max}, default ${dflt})`,
    }),
  });

export function productAnalyticsRoutes(app: TypedApp, { productAnalytics: a }: { productAnalytics: ProductAnalytics }) {
  const admin = { auth: 'admin' as const };
  const tags = ['analytics'];
  app.get(
    '/api/crm/analytics/onboarding-funnel',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Onboarding checklist funnel of users who started it in the window',
        querystring: hoursQuery(720, 168),
        response: { 200: S.OnboardingFunnel, ...errors(400, 401, 403) },
      },
    },
    async (req) => a.onboardingFunnel(requireActor(req), req.query.hours),
  );
  app.get(
    '/api/crm/analytics/lifecycle-funnel',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Lifecycle funnel (signup → … → return on day 2) of users who signed up in the window',
        description:
          'Strict funnel: a user counts at a step when it reached every previous step. `email_verified` is when ' +
          'the verification link was used; `first_response` the first succeeded agent run; `return_day2` any ' +
          'login, message or event at least 24 hours after signup. Segments: `cli` (a CLI check-in), else `tg` ' +
          '(a messenger message), else `web`. Medians are nearest-rank, in seconds.',
        querystring: daysQuery(365, 30),
        response: { 200: S.LifecycleFunnel, ...errors(400, 401, 403) },
      },
    },
    async (req) => a.lifecycleFunnel(requireActor(req), req.query.days),
  );
  app.get(
    '/api/crm/analytics/wizard-metrics',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Setup wizard metrics from `wizard_metric` events',
        querystring: Type.Object({
          hours: Type.Integer({
            default: 168,
            description: 'the window in hours (default 168); values outside 1–720 are clamped',
          }),
        }),
        response: { 200: S.WizardMetrics, ...errors(400, 401, 403) },
      },
    },
    async (req) => a.wizardMetrics(requireActor(req), req.query.hours),
  );
  app.post(
    '/api/crm/metrics/wizard',
    {
      schema: {
        tags,
        summary: 'Record a setup wizard metric (best effort)',
        body: S.WizardBody,
        response: { 200: Ok, ...errors(400, 401) },
      },
    },
    async (req) => a.recordWizard(requireActor(req), req.body),
  );
  app.get(
    '/api/crm/analytics/activity',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Platform activity: events and active users per day, events per type',
        querystring: daysQuery(90, 14),
        response: { 200: S.Activity, ...errors(400, 401, 403) },
      },
    },
    async (req) => a.activity(requireActor(req), req.query.days),
  );
  app.get(
    '/api/crm/analytics/sidebar',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Counts for the admin navigation (users, projects, workers, issues, runs, open waitlist)',
        response: { 200: S.Sidebar, ...errors(401, 403) },
      },
    },
    async (req) => a.sidebar(requireActor(req)),
  );
  app.get(
    '/api/crm/analytics/phases',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Client phase timings by phase (nearest-rank p50/p90, max)',
        querystring: hoursQuery(720, 168),
        response: { 200: S.Phases, ...errors(400, 401, 403) },
      },
    },
    async (req) => a.phases(requireActor(req), req.query.hours),
  );
  app.post(
    '/api/crm/analytics/phases',
    {
      config: admin,
      schema: {
        tags,
        summary:
          'Record a client phase timing (admin; best effort); `wipe_render`/`wipe_interaction` feed the wipe metrics',
        body: S.PhaseBody,
        response: { 200: Ok, ...errors(400, 401, 403) },
      },
    },
    async (req) => a.recordPhase(requireActor(req), req.body),
  );
  app.get(
    '/api/crm/admin/wipe-metrics',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Wipe render and interaction figures: totals, by worker, daily, the 50 most recent',
        querystring: daysQuery(90, 7),
        response: { 200: S.WipeMetrics, ...errors(400, 401, 403) },
      },
    },
    async (req) => a.wipeMetrics(requireActor(req), req.query.days),
  );
  app.get(
    '/api/crm/admin/dashboard',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Admin dashboard: CPU, memory, disk, users per plan, containers, waitlists, events, statistics',
        response: { 200: S.Dashboard, ...errors(401, 403) },
      },
    },
    async (req) => a.dashboard(requireActor(req)),
  );
}
