/**
 * Model tiers and the model a run uses (specification: Resources, "Model tiers"; Workers, `GET /model-tiers`).
 * The ONE place the tiers are configured; `GET /model-tiers` (workers area) serves `MODEL_TIERS` as is.
 *
 * Choice of model for a run, first match wins:
 *  1. the per-message `model` (a tier key or a model id): used as is, no cascade;
 *  2. project `config.modelMode = 'strict'` (the default): the worker's own `model`, else the fallback tier;
 *  3. `modelMode = 'optimize'`: the role's default tier (`roleDefaults[worker.role]`, else `fallbackTier`),
 *     with a cascade: the run starts on that (cheaper) tier and escalates one stage at a time on the
 *     failure classes of `EscalationClass` (see engine.ts).
 */

export interface ModelTier {
  key: string;
  label: string;
  /** 1 = cheapest; escalation goes to the next higher stage. */
  stage: number;
  model: string;
  hint: string;
}

export interface ModelTiers {
  tiers: ModelTier[];
  /** Role id → tier key, for `modelMode: 'optimize'`. */
  roleDefaults: Record<string, string>;
  fallbackTier: string;
}

export const MODEL_TIERS: ModelTiers = {
  tiers: [
    {
      key: 'fast',
      label: 'Fast',
      stage: 1,
      model: 'claude-haiku-4-5',
      hint: 'Routine edits, triage, summaries and status updates.',
    },
    {
      key: 'balanced',
      label: 'Balanced',
      stage: 2,
      model: 'claude-sonnet-4-6',
      hint: 'Everyday development, reviews and writing.',
    },
    {
      key: 'deep',
      label: 'Deep',
      stage: 3,
      model: 'claude-opus-4-7',
      hint: 'Architecture, hard bugs and long multi-step work.',
    },
  ],
  // Role ids are the preset ids (workers/presets.ts); optimize mode starts a run on this tier.
  roleDefaults: {
    developer: 'fast',
    qa: 'fast',
    devops: 'fast',
    'product-manager': 'fast',
    designer: 'fast',
    copywriter: 'fast',
    seo: 'fast',
    marketer: 'fast',
    support: 'fast',
    'data-analyst': 'fast',
    researcher: 'balanced',
    reviewer: 'balanced',
    architect: 'balanced',
  },
  fallbackTier: 'balanced',
};

/** The models a run may use, in order; `cascade` is true when escalation is allowed. */
export interface ModelPlan {
  models: string[];
  cascade: boolean;
  /** The tier the plan starts on (optimize mode), for telemetry. */
  tier: string | null;
  reason: 'message' | 'strict' | 'optimize';
}

const tierByKey = (key: string) => MODEL_TIERS.tiers.find((t) => t.key === key);

/**
 * Decide the model plan of a run (rules above).
 * @param input.messageModel the per-message choice: a tier key or a model id.
 * @param input.modelMode the project's `config.modelMode` (anything but 'optimize' is strict).
 */
export function pickModelPlan(input: {
  messageModel?: string | null;
  modelMode?: unknown;
  workerModel?: string | null;
  role?: string | null;
}): ModelPlan {
  const fallback = tierByKey(MODEL_TIERS.fallbackTier)!;
  if (input.messageModel) {
    return {
      models: [tierByKey(input.messageModel)?.model ?? input.messageModel],
      cascade: false,
      tier: tierByKey(input.messageModel)?.key ?? null,
      reason: 'message',
    };
  }
  if (input.modelMode !== 'optimize') {
    const own = input.workerModel ? (tierByKey(input.workerModel)?.model ?? input.workerModel) : fallback.model;
    return { models: [own], cascade: false, tier: null, reason: 'strict' };
  }
  const start = tierByKey(MODEL_TIERS.roleDefaults[(input.role ?? '').toLowerCase()] ?? '') ?? fallback;
  const ladder = [...MODEL_TIERS.tiers].sort((a, b) => a.stage - b.stage).filter((t) => t.stage >= start.stage);
  return { models: ladder.map((t) => t.model), cascade: ladder.length > 1, tier: start.key, reason: 'optimize' };
}
