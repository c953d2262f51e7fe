/** Feedback and translation feedback routes (docs/ARCHITECTURE.md, Feedback and translation feedback). */
import type { TypedApp } from '../../http/typed-app.ts';
import { requireActor } from '../../http/auth.ts';
import { errors, idParam, Ok } from '../../http/schemas.ts';
import {
  AcceptAnswer,
  FeedbackAnswer,
  FeedbackBody,
  FeedbackList,
  LimitQuery,
  ReviewBody,
  TranslationBody,
  TranslationList,
  TranslationQuery,
  TranslationStats,
  TranslationStored,
} from './feedback.schemas.ts';
import type { FeedbackService } from './feedback.service.ts';

export function feedbackRoutes(app: TypedApp, { feedback }: { feedback: FeedbackService }): void {
  const tags = ['feedback'];
  const admin = { auth: 'admin' as const };
  const Id = idParam('the translation suggestion id');
  app.post(
    '/api/crm/feedback',
    {
      schema: {
        tags,
        summary: 'Send a bug report, feature request or other feedback (the operator is notified)',
        body: FeedbackBody,
        response: { 200: FeedbackAnswer, ...errors(400, 401) },
      },
    },
    async (req) => feedback.submit(requireActor(req), req.body),
  );
  app.get(
    '/api/crm/admin/feedback',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Feedback reports, newest first',
        querystring: LimitQuery,
        response: { 200: FeedbackList, ...errors(400, 401, 403) },
      },
    },
    async (req) => feedback.listReports(requireActor(req), req.query.limit),
  );
  app.post(
    '/api/crm/feedback/translation',
    {
      schema: {
        tags,
        summary: 'Suggest a better translation of a text',
        body: TranslationBody,
        response: { 201: TranslationStored, ...errors(400, 401) },
      },
    },
    async (req, reply) => reply.code(201).send(await feedback.suggest(requireActor(req), req.body)),
  );
  app.get(
    '/api/crm/admin/translations',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Translation suggestions, newest first',
        querystring: TranslationQuery,
        response: { 200: TranslationList, ...errors(400, 401, 403) },
      },
    },
    async (req) => feedback.listTranslations(requireActor(req), req.query),
  );
  app.get(
    '/api/crm/admin/translations/stats',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Translation suggestions per locale',
        response: { 200: TranslationStats, ...errors(401, 403) },
      },
    },
    async (req) => feedback.stats(requireActor(req)),
  );
  app.post(
    '/api/crm/admin/translations/:id/accept',
    {
      config: admin,
      schema: {
        tags,
        summary: "Accept a suggestion: the locale's gettext catalogs holding the msgid are patched",
        params: Id,
        body: ReviewBody,
        response: { 200: AcceptAnswer, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req) => feedback.accept(requireActor(req), req.params.id, req.body?.note),
  );
  app.post(
    '/api/crm/admin/translations/:id/reject',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Reject a suggestion',
        params: Id,
        body: ReviewBody,
        response: { 200: Ok, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req) => feedback.reject(requireActor(req), req.params.id, req.body?.note),
  );
}
