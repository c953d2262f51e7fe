/**
 * The one model table (docs/ARCHITECTURE.md, Model calls): the tiers, the
 * model of each tier per vendor, which tier each purpose of a model call uses, and the model a run uses.
 * `GET /model-tiers` (workers area) serves `MODEL_TIERS` (its `openai` models are not part of that answer).
 *
 * A model call of the service names its purpose (`ModelPurpose`, also the `source` of its usage row); the
 * model gateway (model-gateway.ts) calls the purpose's tier on the configured vendor (`modelFor`). Runs choose
 * their models with `pickModelPlan`:
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
  /** The tier's model (Anthropic's Messages API; also what runs use, whatever the vendor). */
  model: string;
  /** The tier's model on an OpenAI-compatible vendor (`LLM_PROVIDER=openai`) for purpose calls. */
  openai: string;
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
      openai: 'gpt-4o-mini',
      hint: 'Routine edits, triage, summaries and status updates.',
    },
    {
      key: 'balanced',
      label: 'Balanced',
      stage: 2,
      model: 'claude-sonnet-4-6',
      openai: 'gpt-4o',
      hint: 'Everyday development, reviews and writing.',
    },
    {
      key: 'deep',
      label: 'Deep',
      stage: 3,
      model: 'claude-opus-4-7',
      openai: 'gpt-4.1',
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

const tierByKey = (key: string) => MODEL_TIERS.tiers.find((t) => t.key === key);

/**
 * What a model call is for: the `source` of its usage row, and the tier it uses (`PURPOSE_TIERS`). `worker` is a
 * run's call (its model comes from `pickModelPlan`).
 */
export type ModelPurpose =
  'worker' | 'generate_prompt' | 'note_chat' | 'note_source' | 'transcript' | 'sage' | 'help' | 'platform_test';

/**
 * The tier of each purpose: the note chat and image descriptions, prompt writing and skill reviews on the
 * balanced tier; transcript frames and summaries, the help assistant and the key test on the fast one.
 */
export const PURPOSE_TIERS: Record<ModelPurpose, string> = {
  worker: MODEL_TIERS.fallbackTier,
  generate_prompt: 'balanced',
  note_chat: 'balanced',
  note_source: 'balanced',
  sage: 'balanced',
  transcript: 'fast',
  help: 'fast',
  platform_test: 'fast',
};

/** The LLM vendors (`LLM_PROVIDER`). */
export type ModelVendor = 'anthropic' | 'openai';

/** The model a call of `purpose` uses on `vendor`: its tier's model there. */
export function modelFor(purpose: ModelPurpose, vendor: ModelVendor): string {
  const tier = tierByKey(PURPOSE_TIERS[purpose]) ?? tierByKey(MODEL_TIERS.fallbackTier)!;
  return vendor === 'openai' ? tier.openai : tier.model;
}

/** The models a run may use, in order; `cascade` is true when escalation is allowed. */
export interface ModelPlan {
  models: string[];
  cascade: boolean;
  /** The tier the plan starts on (optimize mode), for telemetry. */
  tier: string | null;
  reason: 'message' | 'strict' | 'optimize';
}

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
