/**
 * A local payment provider (hosted invoice acquiring) speaking the wire protocol the service uses:
 * - `POST /api/merchant/invoice/create` (header `X-Token`) `{amount, ccy, merchantPaymInfo, redirectUrl, webHookUrl,
 *   saveCardData}` → `{invoiceId, pageUrl}`;
 * - `POST /api/merchant/wallet/payment` `{cardToken, amount, ccy, initiationKind, merchantPaymInfo, webHookUrl}` →
 *   `{invoiceId, status: 'processing'}`;
 * - a wrong `X-Token` → 403 `{errCode, errText}`;
 * - the hosted page `GET /pay/:invoiceId` (the invoice and a Pay button) and `POST /pay/:invoiceId` (pays: the
 *   success callback to the invoice's `webHookUrl`, then 303 to its `redirectUrl`).
 * `callback(invoiceId, status)` posts the provider's callback for one of its invoices to the invoice's `webHookUrl`
 * (its origin replaced by `origin` when given: the service listening on a local port) with header `X-Token`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PayprovInvoice {
  invoiceId: string;
  kind: 'invoice' | 'wallet';
  body: any;
  token: string;
}

export async function startPayprovStandIn(merchantToken: string) {
  const invoices = new Map<string, PayprovInvoice>();
  const calls: Array<{ path: string; token: string; body: any }> = [];
  let seq = 0;
  let failNext = 0;
  let url = '';
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const send = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      const token = String(req.headers['x-token'] ?? '');
      let body: any;
      try {
        body = raw ? JSON.parse(raw) : {};
      } catch {
        return send(400, { errCode: 'BAD_REQUEST', errText: 'invalid JSON' });
      }
      // The hosted invoice page the buyer's browser is sent to (no merchant token): GET shows the invoice with a
      // Pay button; POST pays it: the success callback goes to the invoice's webHookUrl, then the browser is sent
      // back to its redirectUrl, as the real provider does.
      const page = /^\/pay\/([A-Za-z0-9]+)$/.exec(req.url ?? '');
      if (page) {
        const inv = invoices.get(page[1]);
        if (!inv) return res.writeHead(404, { 'content-type': 'text/plain' }).end('no such invoice');
        if (req.method === 'GET')
          return res
            .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
            .end(
              `<!doctype html><title>Invoice</title><h1>Invoice ${inv.invoiceId}</h1>` +
                `<p>${inv.body.merchantPaymInfo?.destination ?? ''}: ${(inv.body.amount / 100).toFixed(2)} UAH</p>` +
                `<form method="post"><button>Pay</button></form>`,
            );
        void fetch(inv.body.webHookUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-token': merchantToken },
          body: JSON.stringify(callbackBody(inv.invoiceId, 'success')),
        })
          .catch(() => undefined)
          .then(() => res.writeHead(303, { location: inv.body.redirectUrl }).end());
        return;
      }
      calls.push({ path: req.url ?? '', token, body });
      if (token !== merchantToken) return send(403, { errCode: 'FORBIDDEN', errText: 'forbidden' });
      if (failNext > 0) {
        failNext--;
        return send(500, { errCode: 'INTERNAL', errText: 'internal error' });
      }
      if (req.method === 'POST' && req.url === '/api/merchant/invoice/create') {
        if (!Number.isInteger(body.amount) || body.amount <= 0 || !body.webHookUrl)
          return send(400, { errCode: 'BAD_REQUEST', errText: 'amount and webHookUrl are required' });
        const invoiceId = `inv${++seq}${Date.now().toString(36)}`;
        invoices.set(invoiceId, { invoiceId, kind: 'invoice', body, token });
        return send(200, { invoiceId, pageUrl: `${url}/pay/${invoiceId}` });
      }
      if (req.method === 'POST' && req.url === '/api/merchant/wallet/payment') {
        if (!body.cardToken || body.initiationKind !== 'merchant')
          return send(400, { errCode: 'BAD_REQUEST', errText: 'cardToken and initiationKind are required' });
        const invoiceId = `wal${++seq}${Date.now().toString(36)}`;
        invoices.set(invoiceId, { invoiceId, kind: 'wallet', body, token });
        return send(200, { invoiceId, tdsUrl: null, status: 'processing', createdDate: new Date().toISOString() });
      }
      return send(404, { errCode: 'NOT_FOUND', errText: 'not found' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  /** The callback body the provider sends for an invoice in `status`. */
  function callbackBody(
    invoiceId: string,
    status: string,
    opts: { modifiedDate?: string; cardToken?: string; maskedPan?: string; failureReason?: string } = {},
  ) {
    const inv = invoices.get(invoiceId);
    if (!inv) throw new Error(`unknown invoice ${invoiceId}`);
    const b = inv.body;
    return {
      invoiceId,
      status,
      amount: b.amount,
      ccy: b.ccy ?? 980,
      finalAmount: status === 'success' ? b.amount : 0,
      reference: b.merchantPaymInfo?.reference,
      destination: b.merchantPaymInfo?.destination,
      createdDate: new Date().toISOString(),
      modifiedDate: opts.modifiedDate ?? new Date().toISOString(),
      ...(status === 'failure' || status === 'expired' ? { failureReason: opts.failureReason ?? 'Card declined' } : {}),
      ...(status === 'success'
        ? {
            paymentInfo: { maskedPan: opts.maskedPan ?? '444403******1902', paymentSystem: 'visa' },
            walletData: {
              cardToken: opts.cardToken ?? b.cardToken ?? `card-${invoiceId}`,
              walletId: b.saveCardData?.walletId ?? null,
              status: 'created',
            },
          }
        : {}),
    };
  }

  return {
    url,
    calls,
    invoices,
    /** Answer the next `n` calls with 500. */
    failNextCalls: (n: number) => (failNext = n),
    callbackBody,
    /**
     * POST the callback of `invoiceId` to its `webHookUrl` (origin replaced by `origin`), with `X-Token` (the
     * merchant token unless `token` is given). @returns the service's status and body.
     */
    async callback(
      invoiceId: string,
      status: string,
      opts: Parameters<typeof callbackBody>[2] & { origin?: string; token?: string; body?: unknown } = {},
    ): Promise<{ status: number; body: any }> {
      const inv = invoices.get(invoiceId)!;
      const target = new URL(inv.body.webHookUrl);
      const dest = opts.origin ? new URL(target.pathname, opts.origin).toString() : target.toString();
      const res = await fetch(dest, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-token': opts.token ?? merchantToken },
        body: JSON.stringify(opts.body ?? callbackBody(invoiceId, status, opts)),
      });
      const text = await res.text();
      let body: any = text;
      try {
        body = JSON.parse(text);
      } catch {
        /* text */
      }
      return { status: res.status, body };
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
