/**
 * The billing area (docs/ARCHITECTURE.md, Plans and payments): hosted checkout through the payment provider, its
 * callbacks, renewals charged to the saved card, cancellation, and the billing status and summary of a user.
 *
 * Plan changes are one transaction each: the callback's `payprov_events` row (the idempotency key), the invoice
 * status, the billing row, the user's plan (through the accounts repository) and the activity event; e-mails are
 * sent after the commit. Plans, limits, features and caps come from the usage area's one definition
 * (`usage/usage.rules.ts`); token figures from the usage service.
 */
import crypto from 'node:crypto';
import type { Static } from 'typebox';
import type { Config } from '../../config.ts';
import type { UserCache } from '../../http/auth.ts';
import type { Actor } from '../../http/auth.ts';
import { BadRequest, Conflict, Forbidden, Unauthorized, Upstream } from '../../http/errors.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { ActivityLog } from '../../lib/activity.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Mailer } from '../../providers/mail/mail.ts';
import { type PaymentProvider, PaymentProviderError } from '../../providers/payments/payments.ts';
import { maskSecret, safeEqual, type Sealer } from '../../secrets/crypto.ts';
import type { SecretStore } from '../../secrets/secret-store.ts';
import type { AccountsRepo } from '../accounts/accounts.repo.ts';
import type { LlmKeys } from '../accounts/llm-keys.ts';
import {
  CHECKOUT_PLANS,
  type CheckoutPlan,
  dailyTokenCap,
  PAID_PLANS,
  planFeatures,
  planLimits,
  upgradesFrom,
} from '../usage/usage.rules.ts';
import type { UsageService } from '../usage/usage.service.ts';
import type { BillingAccount, BillingRepo } from './billing.repo.ts';
import type * as S from './billing.schemas.ts';
import { addMonth, monthStart, spendUsd, weekStart } from './billing.rules.ts';

/** The secret-store name of the merchant token. */
export const MERCHANT_TOKEN = 'PAYPROV_MERCHANT_TOKEN';
/** Failed payments in a row that drop a paid plan to free (docs/ARCHITECTURE.md, Plans and payments). */
export const FAILURES_TO_DOWNGRADE = 3;
/** How long before the end of a period its renewal is charged, in ms (1 day). */
export const RENEW_AHEAD_MS = 86_400_000;
/** Delay before the next renewal attempt after a failed one, in ms (1 day). */
export const RENEW_RETRY_MS = 86_400_000;

/** The cloud area's interface billing needs: pause a user's container (a no-op without one). */
export interface CloudPort {
  pauseUser(userId: number): Promise<void>;
}

export interface BillingDeps {
  repo: BillingRepo;
  accounts: Pick<AccountsRepo, 'replacePlan' | 'planForUpdate' | 'emails'>;
  usage: Pick<UsageService, 'planOf' | 'totalsSince' | 'byModelSince'>;
  /** An owner's projects and workers (the plan limits' counts). */
  holdings: { countFor(userId: number): Promise<{ projects: number; workers: number }> };
  llmKeys: Pick<LlmKeys, 'forUser'>;
  cloud: CloudPort;
  payments: PaymentProvider;
  secrets: Pick<SecretStore, 'get'>;
  sealer: Sealer;
  mailer: Pick<Mailer, 'send'>;
  activity: Pick<ActivityLog, 'record'>;
  jobs: Pick<JobQueue, 'send'>;
  userCache: Pick<UserCache, 'changed'>;
  config: Pick<Config, 'appUrl' | 'planPricesUah'>;
  log: Logger;
}

/** Renewal job payload: charge attempt `attempt` (1–3) of the period ending `period_end` (ISO). */
export interface RenewJob {
  user_id: number;
  period_end: string;
  attempt: number;
}

type WebhookBody = Static<typeof S.WebhookBody>;

/** What a callback changed, for the e-mails sent after its commit. */
type Outcome =
  | { kind: 'none' }
  | { kind: 'success'; userId: number; plan: string; from: string; amount: number; periodEnd: Date }
  | { kind: 'failure'; userId: number; plan: string; failures: number; downgradedFrom: string | null };

export function createBillingService(deps: BillingDeps) {
  const { repo, accounts, usage, secrets, sealer, payments, mailer, activity, jobs, config, log } = deps;
  const webHookUrl = `${config.appUrl}/api/crm/billing/webhook`;
  const priceUah = (plan: string): number | undefined =>
    (config.planPricesUah as Record<string, number>)[plan] ?? undefined;
  const walletIdFor = (userId: number) => `u${userId}-${crypto.randomBytes(6).toString('hex')}`;

  async function merchantToken(): Promise<string> {
    const t = await secrets.get(MERCHANT_TOKEN);
    if (!t)
      throw new Upstream(503, 'payprov_unavailable', 'Payments are not configured: the merchant token is not set.');
    return t;
  }

  function providerFailure(err: unknown): never {
    if (err instanceof PaymentProviderError)
      throw new Upstream(502, 'payprov_error', 'The payment provider did not accept the request; try again later.', {
        upstream_status: err.status,
      });
    throw err;
  }

  /** The redirect after payment: a path or URL on this service's own origin (never elsewhere). */
  function redirectOf(url: string | undefined, field: string): string {
    const fallback = `${config.appUrl}/account?tab=billing`;
    if (!url) return fallback;
    let u: URL;
    try {
      u = new URL(url, config.appUrl);
    } catch {
      throw new BadRequest('invalid_redirect', `${field} is not a valid URL.`);
    }
    if (u.origin !== new URL(config.appUrl).origin)
      throw new BadRequest('invalid_redirect', `${field} must be a page of this service.`);
    return u.toString();
  }

  async function emailOf(userId: number): Promise<string | undefined> {
    return (await accounts.emails([userId])).get(userId);
  }

  async function mail(userId: number, kind: string, subject: string, text: string): Promise<void> {
    const to = await emailOf(userId);
    if (!to) return;
    try {
      await mailer.send({ to, subject, text, kind });
    } catch (err) {
      log.warn({ err, kind }, 'billing e-mail could not be recorded');
    }
  }

  const fmtDate = (d: Date) => d.toISOString().slice(0, 10);

  async function afterOutcome(o: Outcome): Promise<void> {
    if (o.kind === 'success') {
      if (o.from !== o.plan) await deps.userCache.changed(o.userId);
      await mail(
        o.userId,
        'billing_receipt',
        `Payment received: ${o.plan} plan`,
        `Thank you. We received ${(o.amount / 100).toFixed(2)} UAH for the ${o.plan} plan.\n` +
          `Your plan is paid until ${fmtDate(o.periodEnd)}.`,
      );
    } else if (o.kind === 'failure') {
      if (o.downgradedFrom) {
        await deps.userCache.changed(o.userId);
        // The plan no longer includes cloud: the container pauses now (and refuses every use until a plan does).
        await deps.cloud
          .pauseUser(o.userId)
          .catch((err) => log.warn({ err, user_id: o.userId }, 'downgrade: the cloud container could not be paused'));
        await mail(
          o.userId,
          'billing_downgrade',
          'Your plan is now free',
          `${o.failures} payments for your ${o.downgradedFrom} plan failed, so your account moved to the free plan.\n` +
            `You can buy a plan again at any time: ${config.appUrl}/account?tab=billing`,
        );
      } else {
        await mail(
          o.userId,
          'billing_failure',
          `Payment failed: ${o.plan} plan`,
          `A payment for the ${o.plan} plan did not go through (failure ${o.failures} of ${FAILURES_TO_DOWNGRADE}).\n` +
            `After ${FAILURES_TO_DOWNGRADE} failed payments in a row the account moves to the free plan. ` +
            `Check your card at ${config.appUrl}/account?tab=billing`,
        );
      }
    }
  }

  /** Send renewal attempt `attempt` of the period ending `periodEnd`, due at `at`, inside `tx`. */
  async function scheduleRenewal(tx: Parameters<BillingRepo['updateAccount']>[0], job: RenewJob, at: Date) {
    await jobs.send('billing.renew', job, {
      tx: tx as never,
      singletonKey: `billing.renew:${job.user_id}:${job.period_end}:${job.attempt}`,
      startAfter: at,
    });
  }

  function statusView(plan: string, acc: BillingAccount | undefined) {
    const status = acc?.status ?? 'none';
    const periodEnd = acc?.current_period_end ?? null;
    const renewing = !!acc?.card_token_enc && (status === 'active' || status === 'past_due') && periodEnd;
    return {
      plan,
      status,
      current_period_end: periodEnd,
      next_billing_date: renewing ? new Date(+periodEnd - RENEW_AHEAD_MS) : null,
      payprov_masked_pan: acc?.masked_pan ?? null,
    };
  }

  const service = {
    /**
     * `POST /billing/checkout-session {plan: min|cloud, success_url?, cancel_url?}`: record an invoice, ask the
     * provider for a hosted invoice that saves the card, and answer its page.
     * @returns `{url, invoice_id, plan, amount_uah}`.
     * @throws 403 `email_not_verified`; 400 `invalid_redirect` (a URL off this service's origin); 503
     * `payprov_unavailable` without the merchant token; 502 `payprov_error` when the provider refuses or fails.
     */
    async checkout(actor: Actor, body: Static<typeof S.CheckoutBody>) {
      if (!actor.email_verified)
        throw new Forbidden('Verify your e-mail address before buying a plan.', 'email_not_verified');
      const plan: CheckoutPlan = body.plan;
      const redirectUrl = redirectOf(body.success_url, 'success_url');
      if (body.cancel_url) redirectOf(body.cancel_url, 'cancel_url');
      const token = await merchantToken();
      const amountUah = priceUah(plan)!;
      const amount = Math.round(amountUah * 100);
      const acc = await repo.ensureAccount(actor.id, walletIdFor(actor.id));
      const reference = `chk-${actor.id}-${crypto.randomUUID()}`;
      await repo.insertInvoice({ reference, userId: actor.id, kind: 'checkout', plan, amount });
      let r: { invoiceId: string; pageUrl: string };
      try {
        r = await payments.createInvoice(token, {
          amount,
          merchantPaymInfo: { reference, destination: `CRM ${plan} plan, 1 month` },
          redirectUrl,
          webHookUrl,
          walletId: acc.wallet_id,
        });
      } catch (err) {
        await repo.markInvoiceError(reference);
        log.warn({ err: (err as Error).message }, 'payment provider refused an invoice');
        providerFailure(err);
      }
      await repo.setInvoiceId(reference, r.invoiceId);
      return { url: r.pageUrl, invoice_id: r.invoiceId, plan, amount_uah: amountUah };
    },

    /**
     * The callback's signature: `X-Token` must be the merchant token (constant-time comparison). The route runs
     * it before the body is read or validated (http/authorize.ts), and `webhook` again.
     * @throws 401 `invalid_signature` (no or another token); 503 `payprov_unavailable` without the merchant token.
     */
    async verifyCallback(xToken: string | undefined): Promise<void> {
      const unsigned = () =>
        new Unauthorized('The callback is not signed with the merchant token.', 'invalid_signature');
      if (!xToken) throw unsigned();
      if (!safeEqual(xToken, await merchantToken())) throw unsigned();
    },

    /**
     * `POST /billing/webhook`: a callback of the provider, verified by `X-Token` (the merchant token, compared in
     * constant time). The first delivery of an (invoice, status, modifiedDate) acts; a repeat, an older status
     * than the one stored, or an unknown invoice changes nothing. `success` activates the invoice's plan for a
     * month (from the end of the paid period when it renews), stores the sealed card token and masked card number,
     * resets the failures and schedules the renewal; `failure` or `expired` counts a failure (once per invoice),
     * schedules the next renewal attempt, and at 3 drops a paid plan to free.
     * @returns `{ok: true}`.
     * @throws 401 `invalid_signature`; 503 `payprov_unavailable` without the merchant token; 400 on a bad date.
     */
    async webhook(xToken: string | undefined, body: WebhookBody): Promise<{ ok: true }> {
      await service.verifyCallback(xToken);
      const modified = new Date(body.modifiedDate);
      if (Number.isNaN(+modified)) throw new BadRequest('invalid_request', 'modifiedDate is not a date.');
      const outcome = await repo.transaction(async (tx): Promise<Outcome> => {
        const inv = await repo.invoiceForUpdate(tx, body.invoiceId, body.reference ?? null);
        const first = await repo.insertEvent(tx, {
          invoiceId: body.invoiceId,
          status: body.status,
          modifiedDate: body.modifiedDate,
          userId: inv?.user_id ?? null,
          failureReason: body.failureReason?.slice(0, 500) ?? null,
        });
        if (!inv || !first) return { kind: 'none' };
        if (inv.last_modified && modified < inv.last_modified) return { kind: 'none' };
        const before = inv.status;
        await repo.setInvoiceStatus(tx, inv.reference, body.status, modified);
        const userId = inv.user_id;
        if (body.status === 'success') {
          if (before === 'success') return { kind: 'none' };
          const acc = await repo.accountForUpdate(tx, userId, walletIdFor(userId));
          const now = new Date();
          const extends_ =
            acc.paid_plan === inv.plan &&
            (acc.status === 'active' || acc.status === 'past_due') &&
            acc.current_period_end &&
            acc.current_period_end > now;
          const periodEnd = addMonth(extends_ ? acc.current_period_end! : now);
          const card = body.walletData?.cardToken;
          await repo.updateAccount(tx, userId, {
            status: 'active',
            paid_plan: inv.plan,
            billing_failures: 0,
            current_period_end: periodEnd,
            ...(card ? { card_token_enc: sealer.seal(card) } : {}),
            ...(body.paymentInfo?.maskedPan ? { masked_pan: body.paymentInfo.maskedPan.slice(0, 32) } : {}),
            renewal_period: null,
            renewal_attempt: 0,
          });
          const change = await accounts.replacePlan(tx, userId, inv.plan);
          if (!change) return { kind: 'none' };
          await activity.record(
            {
              type: 'plan_changed',
              userId,
              actor: 'billing',
              title: `Plan ${change.from} → ${change.to}`,
              payload: { from: change.from, to: change.to, reason: inv.kind === 'renewal' ? 'renewal' : 'payment' },
            },
            tx,
          );
          if (card || acc.card_token_enc) {
            const job = { user_id: userId, period_end: periodEnd.toISOString(), attempt: 1 };
            await scheduleRenewal(tx, job, new Date(+periodEnd - RENEW_AHEAD_MS));
          }
          return { kind: 'success', userId, plan: inv.plan, from: change.from, amount: inv.amount, periodEnd };
        }
        if (body.status === 'failure' || body.status === 'expired') {
          if (before === 'failure' || before === 'expired' || before === 'success') return { kind: 'none' };
          const acc = await repo.accountForUpdate(tx, userId, walletIdFor(userId));
          const failures = acc.billing_failures + 1;
          const current = (await accounts.planForUpdate(tx, userId)) ?? 'free';
          const paid = PAID_PLANS.includes(current);
          if (failures >= FAILURES_TO_DOWNGRADE && paid) {
            await repo.updateAccount(tx, userId, {
              billing_failures: failures,
              status: 'lapsed',
              card_token_enc: null,
              current_period_end: null,
            });
            const change = await accounts.replacePlan(tx, userId, 'free');
            await activity.record(
              {
                type: 'plan_changed',
                userId,
                actor: 'billing',
                title: `Plan ${current} → free`,
                payload: { from: current, to: 'free', reason: 'billing_failures', failures },
              },
              tx,
            );
            return { kind: 'failure', userId, plan: inv.plan, failures, downgradedFrom: change?.from ?? current };
          }
          await repo.updateAccount(tx, userId, {
            billing_failures: failures,
            ...(paid && acc.status === 'active' ? { status: 'past_due' as const } : {}),
          });
          if (inv.kind === 'renewal' && acc.current_period_end && acc.renewal_attempt < FAILURES_TO_DOWNGRADE) {
            const job = {
              user_id: userId,
              period_end: acc.current_period_end.toISOString(),
              attempt: acc.renewal_attempt + 1,
            };
            await scheduleRenewal(tx, job, new Date(Date.now() + RENEW_RETRY_MS));
          }
          return { kind: 'failure', userId, plan: inv.plan, failures, downgradedFrom: null };
        }
        return { kind: 'none' };
      });
      await afterOutcome(outcome);
      return { ok: true };
    },

    /**
     * The renewal job: charge the saved card for the period ending `period_end` (attempt 1 a day before it, later
     * attempts a day after a failure). The attempt is claimed in one statement, so it runs once across instances;
     * a cancelled, lapsed or already renewed subscription is left alone. The outcome arrives by callback.
     * @throws when the provider cannot be reached (the claim is given back and the job retried).
     */
    async renew(job: RenewJob): Promise<void> {
      const token = await secrets.get(MERCHANT_TOKEN);
      if (!token) {
        log.warn({ user_id: job.user_id }, 'renewal skipped: the merchant token is not set');
        return;
      }
      const periodEnd = new Date(job.period_end);
      const claim = await repo.claimRenewal(job.user_id, periodEnd, job.attempt);
      if (!claim) return;
      const amountUah = priceUah(claim.paid_plan);
      if (!amountUah) {
        log.warn({ user_id: job.user_id, plan: claim.paid_plan }, 'renewal skipped: the plan has no price');
        return;
      }
      const amount = Math.round(amountUah * 100);
      const reference = `rnw-${job.user_id}-${fmtDate(periodEnd)}-${job.attempt}-${crypto.randomBytes(4).toString('hex')}`;
      await repo.insertInvoice({ reference, userId: job.user_id, kind: 'renewal', plan: claim.paid_plan, amount });
      try {
        const r = await payments.walletPayment(token, {
          cardToken: sealer.open(claim.card_token_enc),
          amount,
          merchantPaymInfo: { reference, destination: `CRM ${claim.paid_plan} plan, renewal` },
          webHookUrl,
        });
        await repo.setInvoiceId(reference, r.invoiceId);
      } catch (err) {
        await repo.markInvoiceError(reference);
        await repo.releaseRenewal(job.user_id, periodEnd, job.attempt);
        throw err instanceof PaymentProviderError ? new Error(`renewal charge not sent: ${err.detail}`) : err;
      }
    },

    /**
     * `POST /billing/cancel`: drop a paid plan to free at once, forget the saved card (no renewal follows) and
     * pause the cloud container. A free user gets the same answer and nothing changes.
     * @returns `{ok: true, plan: 'free'}`.
     * @throws 409 `plan_not_cancellable` for a plan that is not paid (beta).
     */
    async cancel(actor: Actor): Promise<{ ok: true; plan: 'free' }> {
      const current = (await usage.planOf(actor.id)).plan;
      if (current !== 'free' && !PAID_PLANS.includes(current))
        throw new Conflict('plan_not_cancellable', `The ${current} plan is not a paid subscription.`);
      const change = await repo.transaction(async (tx) => {
        const acc = await repo.accountForUpdate(tx, actor.id, walletIdFor(actor.id));
        const c = await accounts.replacePlan(tx, actor.id, 'free');
        if (!c || c.from === 'free') return undefined;
        await repo.updateAccount(tx, actor.id, {
          status: 'cancelled',
          card_token_enc: null,
          current_period_end: null,
          billing_failures: acc.billing_failures,
        });
        await activity.record(
          {
            type: 'plan_changed',
            userId: actor.id,
            actor: actor.email,
            title: `Plan ${c.from} → free`,
            payload: { from: c.from, to: 'free', reason: 'cancel' },
          },
          tx,
        );
        return c;
      });
      try {
        await deps.cloud.pauseUser(actor.id);
      } catch (err) {
        log.warn({ err, user_id: actor.id }, 'cancel: the cloud container could not be paused');
      }
      if (change) {
        await deps.userCache.changed(actor.id);
        await mail(
          actor.id,
          'billing_cancelled',
          'Your subscription is cancelled',
          `Your ${change.from} plan is cancelled and your account is on the free plan now. No further payments ` +
            `will be taken.`,
        );
      }
      return { ok: true, plan: 'free' };
    },

    /**
     * `GET /billing/status`: plan and subscription, the plan's limits and what the caller holds against them, the
     * plan's features, prices, whether an upgrade can be bought and whether payments are configured.
     */
    async status(actor: Actor) {
      const [{ plan }, acc, held, ready, month] = await Promise.all([
        usage.planOf(actor.id),
        repo.account(actor.id),
        deps.holdings.countFor(actor.id),
        secrets.get(MERCHANT_TOKEN).then((t) => !!t),
        usage.totalsSince(actor.id, monthStart(new Date())),
      ]);
      const limits = planLimits(plan);
      const upgrades = upgradesFrom(plan);
      return {
        ...statusView(plan, acc),
        billing_failures: acc?.billing_failures ?? 0,
        limits: {
          projects: limits?.projects ?? null,
          workers: limits?.workers ?? null,
          daily_tokens_per_worker: dailyTokenCap({ plan, role: 'user' }),
        },
        usage: { projects: held.projects, workers: held.workers, tokens_this_month: month.total },
        features: planFeatures(plan),
        pricing: {
          currency: 'UAH' as const,
          plans: CHECKOUT_PLANS.map((p) => ({ plan: p, amount_uah: priceUah(p)!, limits: planLimits(p)! })),
        },
        can_upgrade: ready && actor.email_verified && upgrades.length > 0,
        upgrades,
        payprov_ready: ready,
      };
    },

    /**
     * `GET /account/billing-summary`: the service plan with this month's tokens, and the LLM key the caller's calls
     * use (their own key, else the platform key): a short prefix, and spend computed from usage with the price
     * table (`billing.rules.ts`). The provider gives no credit balance through its API: `credit_balance_usd` is null.
     */
    async summary(actor: Actor) {
      const now = new Date();
      const [{ plan }, acc, month] = await Promise.all([
        usage.planOf(actor.id),
        repo.account(actor.id),
        usage.totalsSince(actor.id, monthStart(now)),
      ]);
      let key: { key: string; source: 'own' | 'platform' } | undefined;
      try {
        key = await deps.llmKeys.forUser(actor.id, { allowPlatform: true });
      } catch {
        key = undefined;
      }
      const sources = key?.source === 'own' ? (['own'] as const) : (['platform', 'trial'] as const);
      const [spendRows, week] = await Promise.all([
        key ? usage.byModelSince(actor.id, monthStart(now), [...sources]) : Promise.resolve([]),
        usage.totalsSince(actor.id, weekStart(now)),
      ]);
      const v = statusView(plan, acc);
      return {
        service: {
          plan,
          status: v.status,
          tokens_this_month: month.total,
          tokens_input: month.input,
          tokens_output: month.output,
          renewal_date: v.next_billing_date ? v.current_period_end : null,
        },
        llm_provider: {
          connected: !!key,
          key_source: key?.source ?? null,
          key_prefix: key ? maskSecret(key.key) : null,
          credit_balance_usd: null,
          spend_month_usd: key ? spendUsd(spendRows) : null,
          tokens_this_week: week.total,
        },
      };
    },

    /** The privacy export of a user's billing: status and invoices, never the card token. */
    async exportUser(userId: number) {
      const acc = await repo.account(userId);
      return {
        account: acc
          ? {
              status: acc.status,
              paid_plan: acc.paid_plan,
              billing_failures: acc.billing_failures,
              current_period_end: acc.current_period_end,
              masked_pan: acc.masked_pan,
            }
          : null,
        invoices: await repo.invoicesOf(userId),
      };
    },
  };
  return service;
}

export type BillingService = ReturnType<typeof createBillingService>;
