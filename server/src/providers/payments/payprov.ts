/**
 * The payment provider's HTTP API (hosted invoice acquiring): `X-Token` carries the merchant token, amounts are
 * minor units of `ccy` 980 (UAH). Each call has a 15 s time limit. Answers are checked for the fields the service
 * uses; nothing of the request (the token, a card token) appears in an error.
 */
import { type PaymentProvider, PaymentProviderError } from './payments.ts';

/** Time limit of one call to the provider, in ms. */
export const PAYPROV_TIMEOUT_MS = 15_000;

/** The client of the provider at `apiUrl` (no trailing slash). */
export function createPayprov(apiUrl: string, timeoutMs = PAYPROV_TIMEOUT_MS): PaymentProvider {
  async function call(path: string, token: string, body: unknown): Promise<Record<string, unknown>> {
    let res: Response;
    try {
      res = await fetch(`${apiUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-token': token },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'error',
      });
    } catch (err) {
      const name = (err as Error).name;
      throw new PaymentProviderError(0, name === 'TimeoutError' ? 'timeout' : 'unreachable');
    }
    const text = await res.text().catch(() => '');
    if (!res.ok) throw new PaymentProviderError(res.status, `HTTP ${res.status}`);
    try {
      const json = JSON.parse(text) as unknown;
      if (json && typeof json === 'object' && !Array.isArray(json)) return json as Record<string, unknown>;
    } catch {
      /* below */
    }
    throw new PaymentProviderError(res.status, 'malformed answer');
  }
  const str = (v: unknown, what: string, max = 500): string => {
    if (typeof v !== 'string' || !v || v.length > max) throw new PaymentProviderError(200, `answer without ${what}`);
    return v;
  };
  return {
    async createInvoice(token, req) {
      const r = await call('/api/merchant/invoice/create', token, {
        amount: req.amount,
        ccy: 980,
        merchantPaymInfo: req.merchantPaymInfo,
        redirectUrl: req.redirectUrl,
        webHookUrl: req.webHookUrl,
        saveCardData: { saveCard: true, walletId: req.walletId },
      });
      const pageUrl = str(r.pageUrl, 'pageUrl', 2000);
      if (!/^https?:\/\//i.test(pageUrl)) throw new PaymentProviderError(200, 'answer with an invalid pageUrl');
      return { invoiceId: str(r.invoiceId, 'invoiceId', 200), pageUrl };
    },
    async walletPayment(token, req) {
      const r = await call('/api/merchant/wallet/payment', token, {
        cardToken: req.cardToken,
        amount: req.amount,
        ccy: 980,
        initiationKind: 'merchant',
        merchantPaymInfo: req.merchantPaymInfo,
        webHookUrl: req.webHookUrl,
      });
      return {
        invoiceId: str(r.invoiceId, 'invoiceId', 200),
        status: typeof r.status === 'string' ? r.status : 'created',
      };
    },
  };
}
