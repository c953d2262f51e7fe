/** Request and answer schemas of the billing area (TypeBox: validates, serializes, documents). */
import { Type } from 'typebox';
import { DateTime, Nullable } from '../../http/schemas.ts';

const RedirectUrl = (what: string) =>
  Type.String({
    minLength: 1,
    maxLength: 2000,
    description: `${what}: a path or an absolute URL on this service's own origin (another origin: 400 invalid_redirect)`,
  });

export const CheckoutBody = Type.Object({
  plan: Type.Union([Type.Literal('min'), Type.Literal('cloud')], { description: 'the plan to buy' }),
  success_url: Type.Optional(RedirectUrl('where the payer returns after paying (default: the account billing tab)')),
  cancel_url: Type.Optional(RedirectUrl('accepted and checked like success_url; the provider returns to success_url')),
});

export const CheckoutAnswer = Type.Object({
  url: Type.String({ description: "the provider's hosted payment page" }),
  invoice_id: Type.String(),
  plan: Type.String(),
  amount_uah: Type.Number(),
});

const Str = (max: number) => Type.String({ maxLength: max });

/** The provider's callback (fields the service reads; others are accepted and ignored). */
export const WebhookBody = Type.Object(
  {
    invoiceId: Type.String({ minLength: 1, maxLength: 200 }),
    status: Type.Union([
      Type.Literal('created'),
      Type.Literal('processing'),
      Type.Literal('hold'),
      Type.Literal('success'),
      Type.Literal('failure'),
      Type.Literal('reversed'),
      Type.Literal('expired'),
    ]),
    amount: Type.Optional(Type.Integer({ minimum: 0, maximum: 1e12 })),
    ccy: Type.Optional(Type.Integer({ minimum: 0, maximum: 9999 })),
    reference: Type.Optional(Str(200)),
    modifiedDate: Type.String({ minLength: 1, maxLength: 64, description: 'ISO-8601 time of this status' }),
    failureReason: Type.Optional(Str(2000)),
    walletData: Type.Optional(
      Type.Object(
        { cardToken: Type.Optional(Str(2000)), walletId: Type.Optional(Str(200)), status: Type.Optional(Str(64)) },
        { additionalProperties: true },
      ),
    ),
    paymentInfo: Type.Optional(Type.Object({ maskedPan: Type.Optional(Str(64)) }, { additionalProperties: true })),
  },
  { additionalProperties: true },
);

const Status = Type.Union(
  [
    Type.Literal('none'),
    Type.Literal('active'),
    Type.Literal('past_due'),
    Type.Literal('cancelled'),
    Type.Literal('lapsed'),
  ],
  {
    description:
      'subscription: none (never paid), active, past_due (a payment failed), cancelled, lapsed (dropped to free after 3 failures)',
  },
);

const Limits = Type.Object({
  projects: Nullable(Type.Integer()),
  workers: Nullable(Type.Integer()),
  daily_tokens_per_worker: Nullable(Type.Integer({ description: 'null: unmetered' })),
});

export const StatusAnswer = Type.Object({
  plan: Type.String(),
  status: Status,
  current_period_end: Nullable(DateTime({ description: 'end of the paid period' })),
  next_billing_date: Nullable(DateTime({ description: 'when the saved card is charged next (null: no renewal)' })),
  payprov_masked_pan: Nullable(Type.String()),
  billing_failures: Type.Integer(),
  limits: Limits,
  usage: Type.Object({
    projects: Type.Integer(),
    workers: Type.Integer(),
    tokens_this_month: Type.Integer(),
  }),
  features: Type.Object({
    cloud_container: Type.Boolean(),
    own_llm_key: Type.Boolean(),
    unmetered: Type.Boolean(),
    plan_limit_bypass: Type.Boolean(),
  }),
  pricing: Type.Object({
    currency: Type.Literal('UAH'),
    plans: Type.Array(
      Type.Object({
        plan: Type.String(),
        amount_uah: Type.Number(),
        limits: Type.Object({ projects: Type.Integer(), workers: Type.Integer() }),
      }),
    ),
  }),
  can_upgrade: Type.Boolean(),
  upgrades: Type.Array(Type.String(), { description: 'checkout plans above the current one' }),
  payprov_ready: Type.Boolean({ description: 'the merchant token is set' }),
});

export const SummaryAnswer = Type.Object({
  service: Type.Object({
    plan: Type.String(),
    status: Status,
    tokens_this_month: Type.Integer(),
    tokens_input: Type.Integer(),
    tokens_output: Type.Integer(),
    renewal_date: Nullable(DateTime()),
  }),
  llm_provider: Type.Object({
    connected: Type.Boolean({ description: "a key is available: the caller's own, else the platform key" }),
    key_source: Nullable(Type.Union([Type.Literal('own'), Type.Literal('platform')])),
    key_prefix: Nullable(Type.String({ description: 'a short prefix of the key, never the key' })),
    credit_balance_usd: Nullable(Type.Number({ description: 'null: the provider does not report it' })),
    spend_month_usd: Nullable(Type.Number({ description: "this month's usage priced with the service's price table" })),
    tokens_this_week: Type.Integer({ description: 'since Monday 00:00 UTC' }),
  }),
});

export const CancelAnswer = Type.Object({ ok: Type.Boolean(), plan: Type.Literal('free') });
