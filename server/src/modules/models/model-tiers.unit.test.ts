import { describe, expect, it } from 'vitest';
import { MODEL_TIERS, modelFor, PURPOSE_TIERS, pickModelPlan } from './model-tiers.ts';

const model = (key: string) => {
  const t = MODEL_TIERS.tiers.find((x) => x.key === key);
  if (!t) throw new Error(`no tier ${key}`);
  return t.model;
};
/** Models of the tiers from `key`'s stage up, cheapest first (the escalation order). */
const ladderFrom = (key: string) => {
  const start = MODEL_TIERS.tiers.find((x) => x.key === key)?.stage ?? 0;
  return [...MODEL_TIERS.tiers]
    .sort((a, b) => a.stage - b.stage)
    .filter((t) => t.stage >= start)
    .map((t) => t.model);
};

describe('the model of a run (docs/ARCHITECTURE.md, Model calls)', () => {
  it('the per-message model beats modelMode: a tier key resolves to its model, a model id is used as is, no cascade', () => {
    expect(
      pickModelPlan({ messageModel: 'deep', modelMode: 'optimize', workerModel: 'fast', role: 'developer' }),
    ).toEqual({ models: [model('deep')], cascade: false, tier: 'deep', reason: 'message' });
    expect(pickModelPlan({ messageModel: 'some-vendor-model-1', modelMode: 'strict', workerModel: 'fast' })).toEqual({
      models: ['some-vendor-model-1'],
      cascade: false,
      tier: null,
      reason: 'message',
    });
  });

  it("strict (the default, and anything but 'optimize'): the worker's model, else the fallback tier", () => {
    for (const modelMode of [undefined, 'strict', 'something-else', null]) {
      expect(pickModelPlan({ modelMode, workerModel: 'fast', role: 'architect' })).toEqual({
        models: [model('fast')],
        cascade: false,
        tier: null,
        reason: 'strict',
      });
      expect(pickModelPlan({ modelMode, workerModel: 'my-own-model' }).models).toEqual(['my-own-model']);
      expect(pickModelPlan({ modelMode, workerModel: null, role: 'developer' }).models).toEqual([
        model(MODEL_TIERS.fallbackTier),
      ]);
    }
    expect(pickModelPlan({}).models).toEqual([model(MODEL_TIERS.fallbackTier)]);
  });

  it("optimize: the role's default tier (case-insensitive), then each higher stage in order; the worker's model is ignored", () => {
    const dev = pickModelPlan({ modelMode: 'optimize', workerModel: 'deep', role: 'developer' });
    expect(MODEL_TIERS.roleDefaults.developer).toBe('fast');
    expect(dev).toEqual({ models: ladderFrom('fast'), cascade: true, tier: 'fast', reason: 'optimize' });
    expect(dev.models).toEqual([model('fast'), model('balanced'), model('deep')]);

    expect(pickModelPlan({ modelMode: 'optimize', role: 'Developer' }).tier).toBe('fast');

    const architect = pickModelPlan({ modelMode: 'optimize', role: 'architect' });
    expect(MODEL_TIERS.roleDefaults.architect).toBe('balanced');
    expect(architect).toEqual({ models: ladderFrom('balanced'), cascade: true, tier: 'balanced', reason: 'optimize' });
  });

  it('optimize without a known role starts on the fallback tier', () => {
    for (const role of [null, undefined, 'juggler']) {
      const plan = pickModelPlan({ modelMode: 'optimize', role });
      expect(plan.tier).toBe(MODEL_TIERS.fallbackTier);
      expect(plan.models).toEqual(ladderFrom(MODEL_TIERS.fallbackTier));
    }
  });

  it('optimize starting on the top stage has nowhere to escalate: one model, no cascade', () => {
    const top = [...MODEL_TIERS.tiers].sort((a, b) => b.stage - a.stage)[0];
    MODEL_TIERS.roleDefaults['test-top-role'] = top.key;
    try {
      expect(pickModelPlan({ modelMode: 'optimize', role: 'test-top-role' })).toEqual({
        models: [top.model],
        cascade: false,
        tier: top.key,
        reason: 'optimize',
      });
    } finally {
      delete MODEL_TIERS.roleDefaults['test-top-role'];
    }
  });

  it('every role default names a tier', () => {
    for (const key of [...Object.values(MODEL_TIERS.roleDefaults), MODEL_TIERS.fallbackTier])
      expect(MODEL_TIERS.tiers.some((t) => t.key === key)).toBe(true);
  });

  it('each purpose calls its tier on the configured vendor', () => {
    expect(modelFor('note_chat', 'anthropic')).toBe('claude-sonnet-4-6');
    expect(modelFor('note_chat', 'openai')).toBe('gpt-4o');
    for (const p of ['transcript', 'help', 'platform_test'] as const) {
      expect(modelFor(p, 'anthropic')).toBe('claude-haiku-4-5');
      expect(modelFor(p, 'openai')).toBe('gpt-4o-mini');
    }
    for (const tier of Object.values(PURPOSE_TIERS)) expect(MODEL_TIERS.tiers.some((t) => t.key === tier)).toBe(true);
  });
});
