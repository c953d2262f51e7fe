import { describe, expect, it } from 'vitest';
import { DEFAULT_PRICE, priceOf, spendUsd } from './billing.rules.ts';

describe('LLM price table', () => {
  it('matches the longest prefix; unknown models get the default price', () => {
    expect(priceOf('claude-sonnet-4-6')).toEqual({ input: 3, output: 15 });
    expect(priceOf('gpt-4o-mini-2024-07-18')).toEqual({ input: 0.15, output: 0.6 });
    expect(priceOf('gpt-4o-2024-08-06')).toEqual({ input: 2.5, output: 10 });
    expect(priceOf('some-local-model')).toEqual(DEFAULT_PRICE);
    expect(priceOf(null)).toEqual(DEFAULT_PRICE);
  });
  it('computes spend in USD, cache at a tenth of input, rounded to cents', () => {
    expect(spendUsd([])).toBe(0);
    // 1M input (1 $) + 1M cache (0.1 $) + 1M output (5 $) on haiku
    expect(spendUsd([{ model: 'claude-haiku-4-5', input: 1_000_000, output: 1_000_000, cache: 1_000_000 }])).toBe(6.1);
    expect(
      spendUsd([
        { model: 'claude-opus-4-7', input: 100_000, output: 10_000, cache: 0 },
        { model: 'gpt-4o-mini', input: 1_000_000, output: 0, cache: 0 },
      ]),
    ).toBe(2.4);
  });
});
