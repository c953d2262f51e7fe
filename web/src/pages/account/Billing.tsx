import { useMutation, useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { useSearchParams } from 'react-router';
import { ApiFailure } from '../../api/client';
import {
  billingStatusQuery,
  billingSummaryQuery,
  startCheckout,
  useCancelPlan,
  useRefreshMe,
} from '../../features/billing/api';
import { useI18n } from '../../i18n';
import { ConfirmDialog, ErrorLine, Loading } from '../../ui';
import {
  billingReturnPath,
  checkoutReturn,
  pollDone,
  subscriptionLabel,
  type CheckoutPlan,
} from '../../features/account/logic';

const POLL_MS = 2000;

/**
 * The plan and payment tab (`/account?tab=billing`): the plan, its limits and usage, the billing summary, buying
 * `min` or `cloud` on the provider's hosted invoice, the return from it (`&checkout=<plan>`: the status is polled
 * until the plan changes, since the provider's callback may arrive a moment later), and cancelling.
 */
export default function Billing() {
  const { t, number, date } = useI18n();
  const refreshMe = useRefreshMe();
  const [params, setParams] = useSearchParams();
  const returned = checkoutReturn(params);
  const [tries, setTries] = useState(0);
  const [bought, setBought] = useState(false);
  const polling = !!returned && !bought && tries < 20;
  const status = useQuery({ ...billingStatusQuery(), refetchInterval: polling ? POLL_MS : false });
  const summary = useQuery(billingSummaryQuery());
  const plan = status.data?.plan;
  const done = !returned || pollDone(plan, returned, tries);
  useEffect(() => {
    if (!returned || !status.dataUpdatedAt) return;
    if (plan === returned) {
      setBought(true);
      refreshMe();
    }
    setTries((n) => n + 1);
  }, [status.dataUpdatedAt, returned, plan, refreshMe]);

  const checkout = useMutation({
    mutationFn: (p: CheckoutPlan) => startCheckout(p, billingReturnPath(p), '/account?tab=billing'),
    onSuccess: (r) => window.location.assign(r.url),
  });
  const [confirmCancel, setConfirmCancel] = useState(false);
  const cancel = useCancelPlan({ onSuccess: () => setConfirmCancel(false) });

  if (status.error) return <ErrorLine error={status.error} />;
  if (!status.data) return <Loading />;
  const s = status.data;
  const unavailable =
    !s.payprov_ready || (checkout.error instanceof ApiFailure && checkout.error.body.error === 'payprov_unavailable');
  const limit = (n: number | null) => (n === null ? t('unlimited') : number(n));
  const paid = s.plan !== 'free' && (s.status === 'active' || s.status === 'past_due');

  return (
    <div className="billing">
      {returned && (
        <p role="status" aria-live="polite" className={plan === returned ? 'ok' : 'muted'}>
          {plan === returned
            ? t('Thank you: your plan is now {plan}.', { plan })
            : done
              ? t('We have not received the payment confirmation yet. If you paid, your plan changes shortly.')
              : t('Checking your payment…')}{' '}
          {done && (
            <button
              type="button"
              className="link"
              onClick={() => {
                params.delete('checkout');
                setParams(params, { replace: true });
              }}
            >
              {t('Dismiss')}
            </button>
          )}
        </p>
      )}
      <h2>{t('Your plan')}</h2>
      <dl className="facts">
        <dt>{t('Plan')}</dt>
        <dd>
          <strong>{s.plan}</strong>
        </dd>
        <dt>{t('Subscription')}</dt>
        <dd>{t(subscriptionLabel(s.status))}</dd>
        {s.current_period_end && (
          <>
            <dt>{t('Paid until')}</dt>
            <dd>{date(s.current_period_end)}</dd>
          </>
        )}
        {s.next_billing_date && (
          <>
            <dt>{t('Next payment')}</dt>
            <dd>{date(s.next_billing_date)}</dd>
          </>
        )}
        {s.payprov_masked_pan && (
          <>
            <dt>{t('Card')}</dt>
            <dd>{s.payprov_masked_pan}</dd>
          </>
        )}
        <dt>{t('Projects')}</dt>
        <dd>
          {number(s.usage.projects)} / {limit(s.limits.projects)}
        </dd>
        <dt>{t('Workers')}</dt>
        <dd>
          {number(s.usage.workers)} / {limit(s.limits.workers)}
        </dd>
        <dt>{t('Tokens this month')}</dt>
        <dd>{number(s.usage.tokens_this_month)}</dd>
        <dt>{t('Cloud container')}</dt>
        <dd>{s.features.cloud_container ? t('included') : t('not included')}</dd>
      </dl>
      {s.billing_failures > 0 && (
        <p className="error">
          {t('{n} payment(s) failed. After 3 failures in a row the plan moves to free.', { n: s.billing_failures })}
        </p>
      )}

      <h2>{t('Buy a plan')}</h2>
      {unavailable ? (
        <p role="status" className="notice">
          {t('Payments are not available on this server yet. Your plan stays as it is.')}
        </p>
      ) : s.upgrades.length === 0 ? (
        <p className="muted">{t('You already have the highest plan on sale.')}</p>
      ) : null}
      <ul className="plans">
        {s.pricing.plans.map((p) => {
          const buyable = s.upgrades.includes(p.plan) && (p.plan === 'min' || p.plan === 'cloud');
          return (
            <li key={p.plan} className={p.plan === s.plan ? 'current' : undefined}>
              <h3>{p.plan}</h3>
              <p>
                {t('{amount} UAH a month', { amount: number(p.amount_uah) })}
                <br />
                {t('{projects} projects, {workers} workers', {
                  projects: number(p.limits.projects),
                  workers: number(p.limits.workers),
                })}
              </p>
              {buyable && (
                <button
                  type="button"
                  className="primary"
                  disabled={unavailable || checkout.isPending}
                  onClick={() => checkout.mutate(p.plan as CheckoutPlan)}
                >
                  {t('Buy {plan}', { plan: p.plan })}
                </button>
              )}
              {p.plan === s.plan && <p className="muted">{t('Your current plan')}</p>}
            </li>
          );
        })}
      </ul>
      {!(checkout.error instanceof ApiFailure && checkout.error.body.error === 'payprov_unavailable') && (
        <ErrorLine error={checkout.error} />
      )}

      {summary.data && (
        <>
          <h2>{t('This month')}</h2>
          <p>
            {t('{total} tokens ({input} in, {output} out)', {
              total: number(summary.data.service.tokens_this_month),
              input: number(summary.data.service.tokens_input),
              output: number(summary.data.service.tokens_output),
            })}
          </p>
          <p>
            {summary.data.llm_provider.connected
              ? summary.data.llm_provider.key_source === 'own'
                ? t('LLM key: your own ({prefix}…)', { prefix: summary.data.llm_provider.key_prefix ?? '' })
                : t('LLM key: the platform key')
              : t('LLM key: none connected')}
            {summary.data.llm_provider.spend_month_usd !== null &&
              ' · ' + t('about ${usd} this month', { usd: summary.data.llm_provider.spend_month_usd.toFixed(2) })}
            {' · '}
            {t('{n} tokens this week', { n: number(summary.data.llm_provider.tokens_this_week) })}
          </p>
        </>
      )}
      <ErrorLine error={summary.error} />

      {paid && (
        <>
          <h2>{t('Cancel')}</h2>
          <p>
            {t('Cancelling moves you to the free plan now, forgets the saved card and pauses the cloud container.')}
          </p>
          <button type="button" className="danger" onClick={() => setConfirmCancel(true)}>
            {t('Cancel the plan')}
          </button>
        </>
      )}
      <ErrorLine error={cancel.isError && !confirmCancel ? cancel.error : null} />
      <ConfirmDialog
        open={confirmCancel}
        title={t('Cancel the {plan} plan?', { plan: s.plan })}
        confirmLabel={t('Yes, cancel the plan')}
        cancelLabel={t('Keep the plan')}
        busy={cancel.isPending}
        error={cancel.error}
        onConfirm={() => cancel.mutate()}
        onCancel={() => setConfirmCancel(false)}
      >
        <p>{t('Your account moves to the free plan now. This cannot be undone; you can buy a plan again later.')}</p>
      </ConfirmDialog>
    </div>
  );
}
