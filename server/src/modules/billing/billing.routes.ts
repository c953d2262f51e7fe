/**
 * Billing routes (docs/ARCHITECTURE.md, Plans and payments): checkout, the provider's callback, cancel,
 * status, and the billing summary.
 */
import { Type } from 'typebox';
import type { TypedApp } from '../../http/typed-app.ts';
import { requireActor } from '../../http/auth.ts';
import { errors } from '../../http/schemas.ts';
import {
  CancelAnswer,
  CheckoutAnswer,
  CheckoutBody,
  StatusAnswer,
  SummaryAnswer,
  WebhookBody,
} from './billing.schemas.ts';
import type { BillingService } from './billing.service.ts';

/** One header's value (the first when sent several times). */
const headerValue = (h: string | string[] | undefined) => (Array.isArray(h) ? h[0] : h);

export function billingRoutes(app: TypedApp, { billing }: { billing: BillingService }): void {
  const tags = ['billing'];
  app.post(
    '/api/crm/billing/checkout-session',
    {
      schema: {
        tags,
        summary: 'Start buying a plan: a hosted invoice of the payment provider that saves the card',
        description:
          'Needs a verified e-mail (403 email_not_verified). Prices come from PLAN_PRICE_UAH_MIN / PLAN_PRICE_UAH_CLOUD. ' +
          'Answers 503 payprov_unavailable when the merchant token is not set, 502 payprov_error when the provider fails.',
        body: CheckoutBody,
        response: { 200: CheckoutAnswer, ...errors(400, 401, 403, 502, 503) },
      },
    },
    async (req) => billing.checkout(requireActor(req), req.body),
  );
  app.post(
    '/api/crm/billing/webhook',
    {
      // No CRM token; the merchant token in X-Token is checked before the body is read (http/authorize.ts).
      config: {
        auth: 'public',
        authorize: (req) => billing.verifyCallback(headerValue(req.headers['x-token'])),
      },
      schema: {
        tags,
        summary: "The payment provider's callback (no CRM token; X-Token must be the merchant token)",
        description:
          'Idempotent: the same invoiceId, status and modifiedDate a second time changes nothing. success activates ' +
          'the plan for a month and stores the card; failure or expired counts a failure, and 3 in a row drop a paid ' +
          'plan to free.',
        headers: Type.Object({
          'x-token': Type.Optional(
            Type.String({ maxLength: 500, description: 'the merchant token (missing or different: 401)' }),
          ),
        }),
        body: WebhookBody,
        response: { 200: Type.Object({ ok: Type.Boolean() }), ...errors(400, 401, 503) },
      },
    },
    async (req) => billing.webhook(req.headers['x-token'], req.body),
  );
  app.post(
    '/api/crm/billing/cancel',
    {
      schema: {
        tags,
        summary: 'Cancel the paid plan now: back to free, the saved card forgotten, the cloud container paused',
        response: { 200: CancelAnswer, ...errors(401, 409) },
      },
    },
    async (req) => billing.cancel(requireActor(req)),
  );
  app.get(
    '/api/crm/billing/status',
    {
      schema: {
        tags,
        summary: "The caller's plan, subscription, limits, usage, features, prices and upgrade options",
        response: { 200: StatusAnswer, ...errors(401) },
      },
    },
    async (req) => billing.status(requireActor(req)),
  );
  app.get(
    '/api/crm/account/billing-summary',
    {
      schema: {
        tags,
        summary: "The service plan with this month's tokens, and the LLM key's figures (own key, else platform key)",
        response: { 200: SummaryAnswer, ...errors(401) },
      },
    },
    async (req) => billing.summary(requireActor(req)),
  );
}
