/**
 * The payment provider seen from the service (hosted invoice acquiring at `PAYPROV_API_URL`): create a hosted
 * invoice that saves the card, and charge a saved card (wallet payment). Outcomes arrive later as callbacks to
 * `POST /api/crm/billing/webhook` (modules/billing). The vendor file (`payprov.ts`) speaks the provider's HTTP API.
 */

/** Merchant reference and purpose shown to the payer. */
export interface MerchantPaymInfo {
  reference: string;
  destination: string;
}

export interface PaymentProvider {
  /**
   * `POST /api/merchant/invoice/create` with the merchant token.
   * @param req.amount minor units (kopiyky); `ccy` is 980 (UAH).
   * @returns the provider's invoice id and the hosted payment page.
   * @throws PaymentProviderError on a network failure, a timeout or a non-2xx answer.
   */
  createInvoice(
    merchantToken: string,
    req: {
      amount: number;
      merchantPaymInfo: MerchantPaymInfo;
      redirectUrl: string;
      webHookUrl: string;
      walletId: string;
    },
  ): Promise<{ invoiceId: string; pageUrl: string }>;
  /**
   * `POST /api/merchant/wallet/payment`: charge a saved card, initiated by the merchant.
   * @param req.amount minor units (kopiyky).
   * @returns the provider's invoice id and its first status; the outcome arrives by callback.
   * @throws PaymentProviderError as `createInvoice`.
   */
  walletPayment(
    merchantToken: string,
    req: { cardToken: string; amount: number; merchantPaymInfo: MerchantPaymInfo; webHookUrl: string },
  ): Promise<{ invoiceId: string; status: string }>;
}

/** The provider could not be reached or refused the call; carries the HTTP status (0: no answer) and no secret. */
export class PaymentProviderError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(`payment provider error: ${detail}`);
  }
}
