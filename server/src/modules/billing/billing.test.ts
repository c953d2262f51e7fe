/**
 * Billing through the HTTP API against a local payment provider (server/test/standins/payprov.ts) and a local SMTP
 * server: checkout, callbacks (signed, replayed, concurrent), renewals once per period, three failures and the
 * downgrade, cancel, status and the billing summary.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api, buildTestApp, buildTestCluster, createUser, type TestApp } from '../../../test/helpers.ts';
import { startPayprovStandIn } from '../../../test/standins/payprov.ts';
import { startSmtpStandIn } from '../../../test/standins/smtp.ts';

const MERCHANT = 'merchant-token-0123456789abcdef';

let t: TestApp;
let pay: Awaited<ReturnType<typeof startPayprovStandIn>>;
let smtp: Awaited<ReturnType<typeof startSmtpStandIn>>;
let origin: string;

beforeAll(async () => {
  pay = await startPayprovStandIn(MERCHANT);
  smtp = await startSmtpStandIn();
  t = await buildTestApp({ env: { PAYPROV_API_URL: pay.url, SMTP_URL: smtp.url, PLAN_PRICE_UAH_MIN: '199' } });
  origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
  await t.deps.secrets.set('PAYPROV_MERCHANT_TOKEN', MERCHANT);
});
afterAll(async () => {
  await t?.close();
  await pay?.close();
  await smtp?.close();
});

const me = async (token: string) => (await api(t.app, 'GET', '/api/auth/me', { token })).body;
const status = async (token: string) => (await api(t.app, 'GET', '/api/crm/billing/status', { token })).body;
const mailsTo = (email: string) => smtp.messages.filter((m) => m.to.includes(email));
const account = (userId: number) =>
  t.db.selectFrom('billing_accounts').selectAll().where('user_id', '=', userId).executeTakeFirstOrThrow();
const waitFor = async (fn: () => boolean, ms = 3000) => {
  const end = Date.now() + ms;
  while (!fn() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
};

async function checkout(token: string, plan: 'min' | 'cloud') {
  const r = await api(t.app, 'POST', '/api/crm/billing/checkout-session', { token, body: { plan } });
  expect(r.status).toBe(200);
  return r.body as { url: string; invoice_id: string; plan: string; amount_uah: number };
}

describe('checkout', () => {
  it('creates a hosted invoice that saves the card and answers its page', async () => {
    const u = await createUser(t);
    const before = pay.calls.length;
    const r = await checkout(u.token, 'min');
    expect(r).toMatchObject({ plan: 'min', amount_uah: 199 });
    expect(r.url).toBe(`${pay.url}/pay/${r.invoice_id}`);
    const call = pay.calls[before];
    expect(call.path).toBe('/api/merchant/invoice/create');
    expect(call.token).toBe(MERCHANT);
    expect(call.body).toMatchObject({
      amount: 19900,
      ccy: 980,
      redirectUrl: 'http://app.test/account?tab=billing',
      webHookUrl: 'http://app.test/api/crm/billing/webhook',
      saveCardData: { saveCard: true },
    });
    expect(call.body.merchantPaymInfo.reference).toMatch(/^chk-/);
    expect(call.body.saveCardData.walletId).toMatch(new RegExp(`^u${u.id}-`));
  });

  it('uses the configured cloud price and a success_url on this origin', async () => {
    const u = await createUser(t);
    const r = await api(t.app, 'POST', '/api/crm/billing/checkout-session', {
      token: u.token,
      body: { plan: 'cloud', success_url: '/account?paid=1' },
    });
    expect(r.status).toBe(200);
    expect(r.body.amount_uah).toBe(t.config.planPricesUah.cloud);
    expect(pay.calls.at(-1)!.body.redirectUrl).toBe('http://app.test/account?paid=1');
  });

  it('refuses an unverified e-mail, another plan, an off-site redirect, and no token', async () => {
    const unverified = await createUser(t, { email_verified: false });
    const before = pay.calls.length;
    const r1 = await api(t.app, 'POST', '/api/crm/billing/checkout-session', {
      token: unverified.token,
      body: { plan: 'min' },
    });
    expect(r1.status).toBe(403);
    expect(r1.body.error).toBe('email_not_verified');
    const u = await createUser(t);
    const r2 = await api(t.app, 'POST', '/api/crm/billing/checkout-session', { token: u.token, body: { plan: 'max' } });
    expect(r2.status).toBe(400);
    for (const url of ['https://evil.example/x', '//evil.example/x', 'javascript:alert(1)']) {
      const r3 = await api(t.app, 'POST', '/api/crm/billing/checkout-session', {
        token: u.token,
        body: { plan: 'min', success_url: url },
      });
      expect(r3.status).toBe(400);
      expect(r3.body.error).toBe('invalid_redirect');
      expect(r3.text).not.toContain('evil');
    }
    const r4 = await api(t.app, 'POST', '/api/crm/billing/checkout-session', { body: { plan: 'min' } });
    expect(r4.status).toBe(401);
    expect(pay.calls.length).toBe(before);
  });

  it('answers 503 payprov_unavailable without the merchant token, 502 when the provider fails', async () => {
    const u = await createUser(t);
    await t.deps.secrets.delete('PAYPROV_MERCHANT_TOKEN');
    try {
      const r = await api(t.app, 'POST', '/api/crm/billing/checkout-session', {
        token: u.token,
        body: { plan: 'min' },
      });
      expect(r.status).toBe(503);
      expect(r.body.error).toBe('payprov_unavailable');
      expect((await status(u.token)).payprov_ready).toBe(false);
      expect((await status(u.token)).can_upgrade).toBe(false);
    } finally {
      await t.deps.secrets.set('PAYPROV_MERCHANT_TOKEN', MERCHANT);
    }
    pay.failNextCalls(1);
    const r = await api(t.app, 'POST', '/api/crm/billing/checkout-session', { token: u.token, body: { plan: 'min' } });
    expect(r.status).toBe(502);
    expect(r.body.error).toBe('payprov_error');
    expect(r.text).not.toContain(MERCHANT);
    const bad = await t.db.selectFrom('payprov_invoices').select('status').where('user_id', '=', u.id).execute();
    expect(bad.map((b) => b.status)).toEqual(['error']);
  });
});

describe('the plan cycle', () => {
  it('checkout → success → replays → renewal → three failures → free; checkout → cancel', async () => {
    const u = await createUser(t);
    const { invoice_id } = await checkout(u.token, 'min');

    // A callback not signed with the merchant token changes nothing.
    const forged = await pay.callback(invoice_id, 'success', { origin, token: 'wrong-token' });
    expect(forged.status).toBe(401);
    expect(forged.body.error).toBe('invalid_signature');
    const unsigned = await fetch(`${origin}/api/crm/billing/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(pay.callbackBody(invoice_id, 'success')),
    });
    expect(unsigned.status).toBe(401);
    expect((await me(u.token)).plan).toBe('free');

    // Success: plan bought, card stored sealed, masked PAN, period end, receipt, activity event, renewal job.
    const body = pay.callbackBody(invoice_id, 'success', { cardToken: 'card-token-secret-777' });
    const ok = await pay.callback(invoice_id, 'success', { origin, body });
    expect(ok).toEqual({ status: 200, body: { ok: true } });
    expect((await me(u.token)).plan).toBe('min');
    const s1 = await status(u.token);
    expect(s1).toMatchObject({
      plan: 'min',
      status: 'active',
      payprov_masked_pan: '444403******1902',
      billing_failures: 0,
      can_upgrade: true,
      upgrades: ['cloud'],
      limits: { projects: 5, workers: 25 },
    });
    const end = new Date(s1.current_period_end);
    expect(end.getTime() - Date.now()).toBeGreaterThan(27 * 86_400_000);
    expect(new Date(s1.next_billing_date).getTime()).toBe(end.getTime() - 86_400_000);
    const acc = await account(u.id);
    expect(acc.card_token_enc).toBeTruthy();
    expect(acc.card_token_enc).not.toContain('card-token-secret-777');
    expect(JSON.stringify(s1)).not.toContain('card-token-secret-777');
    await waitFor(() => mailsTo(u.email).length >= 1);
    expect(mailsTo(u.email).map((m) => m.headers.subject)).toEqual(['Payment received: min plan']);
    expect(await t.deps.jobs.pending('billing.renew')).toBeGreaterThanOrEqual(1);
    const events = await t.db
      .selectFrom('activity_log')
      .select(['type', 'payload'])
      .where('user_id', '=', u.id)
      .where('type', '=', 'plan_changed')
      .execute();
    expect(events.map((e) => e.payload)).toEqual([{ from: 'free', to: 'min', reason: 'payment' }]);

    // The same callback again, twice at once: nothing changes a second time.
    const replays = await Promise.all([
      pay.callback(invoice_id, 'success', { origin, body }),
      pay.callback(invoice_id, 'success', { origin, body }),
    ]);
    expect(replays.map((r) => r.status)).toEqual([200, 200]);
    expect(await t.services.billing.exportUser(u.id)).toMatchObject({ account: { status: 'active' } });
    expect((await status(u.token)).current_period_end).toBe(s1.current_period_end);
    const n = await t.db
      .selectFrom('payprov_events')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('invoice_id', '=', invoice_id)
      .executeTakeFirstOrThrow();
    expect(Number(n.n)).toBe(1);
    await new Promise((r) => setTimeout(r, 100));
    expect(mailsTo(u.email).length).toBe(1);

    // An older status arriving late changes nothing.
    const late = await pay.callback(invoice_id, 'processing', { origin, modifiedDate: '2020-01-01T00:00:00Z' });
    expect(late.status).toBe(200);
    expect((await status(u.token)).status).toBe('active');

    // Renewal: attempt 1 of the period, sent by two instances' jobs at once, charges the card once.
    const job = { user_id: u.id, period_end: end.toISOString(), attempt: 1 };
    const wallets = () => pay.calls.filter((c) => c.path === '/api/merchant/wallet/payment');
    const w0 = wallets().length;
    await Promise.all([t.services.billing.renew(job), t.services.billing.renew(job)]);
    expect(wallets().length).toBe(w0 + 1);
    const charge = wallets().at(-1)!;
    expect(charge.token).toBe(MERCHANT);
    expect(charge.body).toMatchObject({
      cardToken: 'card-token-secret-777',
      amount: 19900,
      ccy: 980,
      initiationKind: 'merchant',
      webHookUrl: 'http://app.test/api/crm/billing/webhook',
    });
    await t.services.billing.renew(job);
    expect(wallets().length).toBe(w0 + 1);

    // Three failed renewal charges in a row: past due, then free.
    const fail = async (attempt: number) => {
      if (attempt > 1) await t.services.billing.renew({ ...job, attempt });
      const inv = [...pay.invoices.values()].filter((i) => i.kind === 'wallet').at(-1)!;
      const r = await pay.callback(inv.invoiceId, 'failure', { origin });
      expect(r.status).toBe(200);
    };
    await fail(1);
    let s = await status(u.token);
    expect(s).toMatchObject({ plan: 'min', status: 'past_due', billing_failures: 1 });
    await fail(2);
    expect((await status(u.token)).billing_failures).toBe(2);
    expect((await me(u.token)).plan).toBe('min');
    await fail(3);
    s = await status(u.token);
    expect(s).toMatchObject({ plan: 'free', status: 'lapsed', billing_failures: 3, next_billing_date: null });
    expect((await me(u.token)).plan).toBe('free');
    expect((await account(u.id)).card_token_enc).toBeNull();
    await waitFor(() => mailsTo(u.email).length >= 4);
    expect(mailsTo(u.email).map((m) => m.headers.subject)).toEqual([
      'Payment received: min plan',
      'Payment failed: min plan',
      'Payment failed: min plan',
      'Your plan is now free',
    ]);
    const changes = await t.db
      .selectFrom('activity_log')
      .select('payload')
      .where('user_id', '=', u.id)
      .where('type', '=', 'plan_changed')
      .orderBy('id')
      .execute();
    expect(changes.map((e) => (e.payload as any).reason)).toEqual(['payment', 'billing_failures']);
    // A lapsed subscription is not charged again.
    await t.services.billing.renew({ ...job, attempt: 3 });
    expect(wallets().length).toBe(w0 + 3);

    // Buy again, then cancel: free at once, card forgotten, an e-mail; a second cancel changes nothing.
    const again = await checkout(u.token, 'cloud');
    await pay.callback(again.invoice_id, 'success', { origin });
    expect((await me(u.token)).plan).toBe('cloud');
    expect((await status(u.token)).billing_failures).toBe(0);
    const c = await api(t.app, 'POST', '/api/crm/billing/cancel', { token: u.token });
    expect(c.status).toBe(200);
    expect(c.body).toEqual({ ok: true, plan: 'free' });
    expect((await me(u.token)).plan).toBe('free');
    expect(await status(u.token)).toMatchObject({ status: 'cancelled', current_period_end: null });
    const c2 = await api(t.app, 'POST', '/api/crm/billing/cancel', { token: u.token });
    expect(c2.body).toEqual({ ok: true, plan: 'free' });
    await waitFor(() => mailsTo(u.email).length >= 6);
    await new Promise((r) => setTimeout(r, 100));
    expect(
      mailsTo(u.email)
        .map((m) => m.headers.subject)
        .slice(4),
    ).toEqual(['Payment received: cloud plan', 'Your subscription is cancelled']);
  });

  it('a failed first payment counts but leaves a free user free; expired counts once per invoice', async () => {
    const u = await createUser(t);
    const { invoice_id } = await checkout(u.token, 'min');
    await pay.callback(invoice_id, 'failure', { origin });
    await pay.callback(invoice_id, 'expired', { origin });
    expect(await status(u.token)).toMatchObject({ plan: 'free', billing_failures: 1 });
  });

  it('ignores callbacks for unknown invoices and refuses malformed ones', async () => {
    const u = await createUser(t);
    const { invoice_id } = await checkout(u.token, 'min');
    const body = { ...pay.callbackBody(invoice_id, 'success'), invoiceId: 'not-ours', reference: 'not-ours' };
    const r = await pay.callback(invoice_id, 'success', { origin, body });
    expect(r).toEqual({ status: 200, body: { ok: true } });
    expect((await me(u.token)).plan).toBe('free');
    for (const bad of [
      { ...body, modifiedDate: 'yesterday' },
      { ...body, status: 'paid' },
      { ...body, invoiceId: 'x'.repeat(10_000) },
    ]) {
      const res = await pay.callback(invoice_id, 'success', { origin, body: bad });
      expect(res.status).toBe(400);
    }
  });

  it('cancel refuses the beta plan; a free user cancels to free', async () => {
    const beta = await createUser(t, { plan: 'beta' });
    const r = await api(t.app, 'POST', '/api/crm/billing/cancel', { token: beta.token });
    expect(r.status).toBe(409);
    expect(r.body.error).toBe('plan_not_cancellable');
    const free = await createUser(t);
    expect((await api(t.app, 'POST', '/api/crm/billing/cancel', { token: free.token })).body).toEqual({
      ok: true,
      plan: 'free',
    });
  });
});

describe('status and summary', () => {
  it('status of a free user: limits, usage, features, pricing, upgrades', async () => {
    const u = await createUser(t);
    const s = await status(u.token);
    expect(s).toMatchObject({
      plan: 'free',
      status: 'none',
      current_period_end: null,
      next_billing_date: null,
      payprov_masked_pan: null,
      limits: { projects: 1, workers: 5, daily_tokens_per_worker: 100_000 },
      usage: { projects: 0, workers: 0, tokens_this_month: 0 },
      features: { cloud_container: false },
      can_upgrade: true,
      upgrades: ['min', 'cloud'],
      payprov_ready: true,
    });
    expect(s.pricing.plans.map((p: any) => [p.plan, p.amount_uah])).toEqual([
      ['min', 199],
      ['cloud', t.config.planPricesUah.cloud],
    ]);
    expect((await api(t.app, 'GET', '/api/crm/billing/status')).status).toBe(401);
  });

  it('summary: tokens of the month, the platform key as fallback, then the own key, spend from the price table', async () => {
    const u = await createUser(t);
    const empty = (await api(t.app, 'GET', '/api/crm/account/billing-summary', { token: u.token })).body;
    expect(empty.llm_provider).toMatchObject({ connected: false, key_prefix: null, spend_month_usd: null });
    const platformKey = 'sk-ant-api03-platform-key-abcdefghijkl';
    await t.deps.secrets.set('PLATFORM_LLM_KEY', platformKey);
    const rec = (keySource: 'own' | 'platform', input: number, output: number) =>
      t.services.usage.record({
        userId: u.id,
        model: 'claude-haiku-4-5',
        source: 'help',
        keySource,
        usage: { input_tokens: input, output_tokens: output, cache_tokens: 0 },
      });
    await rec('platform', 1_000_000, 0);
    await rec('own', 0, 1_000_000);
    const r = await api(t.app, 'GET', '/api/crm/account/billing-summary', { token: u.token });
    expect(r.status).toBe(200);
    expect(r.body.service).toMatchObject({
      plan: 'free',
      status: 'none',
      tokens_this_month: 2_000_000,
      tokens_input: 1_000_000,
      tokens_output: 1_000_000,
      renewal_date: null,
    });
    expect(r.body.llm_provider).toMatchObject({
      connected: true,
      key_source: 'platform',
      key_prefix: 'sk-ant-a…',
      credit_balance_usd: null,
      spend_month_usd: 1,
      tokens_this_week: 2_000_000,
    });
    expect(r.text).not.toContain(platformKey);
    const ownKey = 'sk-ant-api03-own-key-zyxwvutsrqponm';
    expect(
      (await api(t.app, 'PUT', '/api/crm/account/settings', { token: u.token, body: { llm_key: ownKey } })).status,
    ).toBe(200);
    const r2 = await api(t.app, 'GET', '/api/crm/account/billing-summary', { token: u.token });
    expect(r2.body.llm_provider).toMatchObject({ connected: true, key_source: 'own', spend_month_usd: 5 });
    expect(r2.text).not.toContain(ownKey);
    await t.deps.secrets.delete('PLATFORM_LLM_KEY');
  });
});

describe.skipIf(inject('dbKind') !== 'postgres')('two instances on one database', () => {
  it('the same callback delivered to both at once acts once; a renewal is charged once', async () => {
    const cluster = await buildTestCluster(2, { env: { PAYPROV_API_URL: pay.url } });
    try {
      const [a, b] = cluster.instances;
      await a.deps.secrets.set('PAYPROV_MERCHANT_TOKEN', MERCHANT);
      const u = await createUser(a);
      const res = await fetch(`${a.url}/api/crm/billing/checkout-session`, {
        method: 'POST',
        headers: { authorization: `Bearer ${u.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ plan: 'min' }),
      });
      const { invoice_id } = (await res.json()) as { invoice_id: string };
      const body = pay.callbackBody(invoice_id, 'success');
      const r = await Promise.all([
        pay.callback(invoice_id, 'success', { origin: a.url, body }),
        pay.callback(invoice_id, 'success', { origin: b.url, body }),
      ]);
      expect(r.map((x) => x.status)).toEqual([200, 200]);
      const receipts = await a.db
        .selectFrom('outbox')
        .select('kind')
        .where('to_addr', '=', u.email)
        .where('kind', '=', 'billing_receipt')
        .execute();
      expect(receipts).toHaveLength(1);
      const acc = await a.db
        .selectFrom('billing_accounts')
        .select('current_period_end')
        .where('user_id', '=', u.id)
        .executeTakeFirstOrThrow();
      const job = { user_id: u.id, period_end: acc.current_period_end!.toISOString(), attempt: 1 };
      const before = pay.calls.filter((c) => c.path === '/api/merchant/wallet/payment').length;
      await Promise.all([a.services.billing.renew(job), b.services.billing.renew(job)]);
      expect(pay.calls.filter((c) => c.path === '/api/merchant/wallet/payment').length).toBe(before + 1);
    } finally {
      await cluster.close();
    }
  });
});
