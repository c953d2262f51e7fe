import { describe, expect, it } from 'vitest';
import {
  assertPlanAllows,
  dailyTokenCap,
  estimatePromptTokens,
  estimateRequestTokens,
  IMAGE_TOKENS,
  grantableOutput,
  MIN_OUTPUT_TOKENS,
  nextUtcDay,
  planFeatures,
  planLimits,
  tightestBudget,
  trialRemaining,
  upgradesFrom,
  utcDayStart,
} from './usage.rules.ts';

describe('daily caps (docs/ARCHITECTURE.md, Worker runtime)', () => {
  it('free 100K, starter 400K, starter_cloud 2M; beta and admin owners unmetered; unknown plans as free', () => {
    expect(dailyTokenCap({ plan: 'free', role: 'user' })).toBe(100_000);
    expect(dailyTokenCap({ plan: 'starter', role: 'user' })).toBe(400_000);
    expect(dailyTokenCap({ plan: 'starter_cloud', role: 'user' })).toBe(2_000_000);
    expect(dailyTokenCap({ plan: 'beta', role: 'user' })).toBeNull();
    expect(dailyTokenCap({ plan: 'free', role: 'admin' })).toBeNull();
    expect(dailyTokenCap({ plan: 'gold', role: 'user' })).toBe(100_000);
  });
});

describe('plan limits (docs/ARCHITECTURE.md, Usage, budgets and the trial)', () => {
  it('free: 1 project and 5 workers; min: 5 or 25; max: 20 or 150; beta bypasses', () => {
    expect(planLimits('free')).toEqual({ projects: 1, workers: 5 });
    expect(planLimits('min')).toEqual({ projects: 5, workers: 25 });
    expect(planLimits('max')).toEqual({ projects: 20, workers: 150 });
    expect(planLimits('beta')).toBeNull();
  });

  it('exceeding any one limit blocks creation with 402 and the figures', () => {
    expect(() => assertPlanAllows('free', false, { projects: { current: 1, add: 1 } })).toThrow(
      expect.objectContaining({
        statusCode: 402,
        code: 'plan_limit_reached',
        fields: { reason: 'projects_limit', current: 1, limit: 1, plan: 'free' },
      }),
    );
    expect(() =>
      assertPlanAllows('free', false, { projects: { current: 0, add: 1 }, workers: { current: 3, add: 3 } }),
    ).toThrow(expect.objectContaining({ fields: expect.objectContaining({ reason: 'workers_limit', limit: 5 }) }));
    expect(() => assertPlanAllows('free', false, { workers: { current: 4, add: 1 } })).not.toThrow();
    expect(() => assertPlanAllows('free', true, { projects: { current: 9, add: 1 } })).not.toThrow();
    expect(() => assertPlanAllows('beta', false, { workers: { current: 999, add: 1 } })).not.toThrow();
  });
});

describe('the trial formula', () => {
  it('remaining = granted − drawn, never below zero', () => {
    expect(trialRemaining(100_000, 40_000)).toBe(60_000);
    expect(trialRemaining(100_000, 120_000)).toBe(0);
    expect(trialRemaining(100_000, 0)).toBe(100_000);
  });
});

describe('budgets held during a run', () => {
  const b = (cap: number, used: number) => ({ scope: 'daily' as const, cap, used, plan: 'free' });

  it('picks the budget with the least room', () => {
    expect(tightestBudget([b(100_000, 10_000), { ...b(100_000, 95_000), scope: 'trial' }])?.scope).toBe('trial');
    expect(tightestBudget([])).toBeNull();
  });

  it('grants the full output bound when the worst case fits, what fits otherwise, nothing under the minimum', () => {
    expect(grantableOutput(null, 50_000, 4096)).toBe(4096);
    expect(grantableOutput(b(100_000, 90_000), 2000, 4096)).toBe(4096);
    expect(grantableOutput(b(100_000, 97_000), 1000, 4096)).toBe(2000);
    expect(grantableOutput(b(100_000, 99_000), 1000 - MIN_OUTPUT_TOKENS, 4096)).toBe(MIN_OUTPUT_TOKENS);
    expect(grantableOutput(b(100_000, 99_000), 1000 - MIN_OUTPUT_TOKENS + 1, 4096)).toBeNull();
    expect(grantableOutput(b(100_000, 100_500), 10, 4096)).toBeNull();
  });

  it('estimates input tokens conservatively from UTF-8 bytes', () => {
    expect(estimatePromptTokens({ text: 'a'.repeat(300), messages: 1 })).toBe(116);
    // Cyrillic letters take two bytes each, so they count double.
    expect(estimatePromptTokens({ text: 'я'.repeat(300), messages: 2 })).toBe(232);
  });

  it('estimates a whole request: system, text, blocks as JSON, tool schemas, a fixed count per image', () => {
    const text = estimateRequestTokens({ system: 'a'.repeat(150), messages: [{ content: 'b'.repeat(150) }] });
    expect(text).toBe(estimatePromptTokens({ text: 'a'.repeat(300), messages: 1 }));
    const image = { type: 'image', media_type: 'image/png', data: 'x'.repeat(3_000_000) } as {
      type: string;
      [k: string]: unknown;
    };
    const vision = estimateRequestTokens({ messages: [{ content: [image, { type: 'text', text: 'Describe it.' }] }] });
    expect(vision).toBe(
      estimatePromptTokens({ text: JSON.stringify({ type: 'text', text: 'Describe it.' }), messages: 1 }) +
        IMAGE_TOKENS,
    );
    const tools = [{ name: 'create_issue', description: 'd', input_schema: { type: 'object' } }];
    expect(estimateRequestTokens({ messages: [{ content: 'q' }], tools })).toBeGreaterThan(
      estimateRequestTokens({ messages: [{ content: 'q' }] }),
    );
  });
});

describe('the UTC day', () => {
  it('starts at midnight UTC and resets 24 h later', () => {
    const t = new Date('2026-11-23T23:59:59.999Z');
    expect(utcDayStart(t).toISOString()).toBe('2026-11-23T00:00:00.000Z');
    expect(nextUtcDay(t).toISOString()).toBe('2026-11-24T00:00:00.000Z');
  });
});

describe('checkout plans and features', () => {
  it('upgrades: free → min, cloud; min → cloud; cloud, max, beta → none', () => {
    expect(upgradesFrom('free')).toEqual(['min', 'cloud']);
    expect(upgradesFrom('starter')).toEqual(['min', 'cloud']);
    expect(upgradesFrom('min')).toEqual(['cloud']);
    expect(upgradesFrom('cloud')).toEqual([]);
    expect(upgradesFrom('max')).toEqual([]);
    expect(upgradesFrom('beta')).toEqual([]);
    expect(upgradesFrom('unknown')).toEqual(['min', 'cloud']);
  });
  it('the cloud container comes with cloud plans; beta is unmetered', () => {
    expect(planFeatures('cloud').cloud_container).toBe(true);
    expect(planFeatures('min').cloud_container).toBe(false);
    expect(planFeatures('free')).toMatchObject({ cloud_container: false, unmetered: false });
    expect(planFeatures('beta')).toMatchObject({ unmetered: true, plan_limit_bypass: true });
  });
});
