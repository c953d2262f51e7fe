/**
 * The price table the billing summary computes LLM spend with (`llm_provider.spend_month_usd`): USD per million
 * tokens by model, from the vendors' published list prices. A model is matched by the longest known prefix of its
 * id (`claude-sonnet-4-6-20260101` → `claude-sonnet-4`); an unknown model is priced as `DEFAULT_PRICE`. Cache
 * tokens are priced at a tenth of the input price. And the calendar of paid periods: a plan is bought for one
 * calendar month (`addMonth`); summaries count from the start of the month and of the week. Pure rules, no I/O.
 */

/** USD per million input and output tokens. */
export interface ModelPrice {
  input: number;
  output: number;
}

export const LLM_PRICES: Record<string, ModelPrice> = {
  'claude-haiku-4': { input: 1, output: 5 },
  'claude-sonnet-4': { input: 3, output: 15 },
  'claude-opus-4': { input: 15, output: 75 },
  'claude-3-5-haiku': { input: 0.8, output: 4 },
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  'gpt-4o': { input: 2.5, output: 10 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6 },
  'gpt-4.1': { input: 2, output: 8 },
};

/** The price of a model the table does not know (a mid-tier model's). */
export const DEFAULT_PRICE: ModelPrice = { input: 3, output: 15 };

/** The price of a model id: the longest matching prefix of the table, else `DEFAULT_PRICE`. */
export function priceOf(model: string | null): ModelPrice {
  if (!model) return DEFAULT_PRICE;
  let best: string | undefined;
  for (const k of Object.keys(LLM_PRICES)) if (model.startsWith(k) && (!best || k.length > best.length)) best = k;
  return best ? LLM_PRICES[best] : DEFAULT_PRICE;
}

/**
 * USD spent on token sums per model, rounded to cents.
 * @param rows input, output and cache tokens per model.
 */
export function spendUsd(rows: Array<{ model: string | null; input: number; output: number; cache: number }>): number {
  let usd = 0;
  for (const r of rows) {
    const p = priceOf(r.model);
    usd += (r.input * p.input + r.cache * p.input * 0.1 + r.output * p.output) / 1_000_000;
  }
  return Math.round(usd * 100) / 100;
}

/** One month after `d` (UTC calendar month; the 31st becomes the last day of a shorter month). */
export function addMonth(d: Date): Date {
  const r = new Date(d);
  const day = r.getUTCDate();
  r.setUTCDate(1);
  r.setUTCMonth(r.getUTCMonth() + 1);
  const last = new Date(Date.UTC(r.getUTCFullYear(), r.getUTCMonth() + 1, 0)).getUTCDate();
  r.setUTCDate(Math.min(day, last));
  return r;
}

/** The first day of the UTC month of `now`, 00:00. */
export const monthStart = (now: Date) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
/** Monday 00:00 UTC of the week of `now`. */
export const weekStart = (now: Date) => {
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  d.setUTCDate(d.getUTCDate() - ((d.getUTCDay() + 6) % 7));
  return d;
};
