/**
 * The model gateway: the one metered model call of the service (docs/ARCHITECTURE.md, "Model calls"). Every model
 * call — a run's turns, prompt writing, the note chat and image descriptions, transcript frames and summaries,
 * skill reviews and benchmarks, the help assistant, the platform key test — goes through `complete`; it is the
 * only importer of the LLM providers (`providers/llm`, enforced by ESLint's `no-restricted-imports`). An area
 * hands it who pays, a purpose and a prompt; the gateway:
 *
 *  1. resolves who pays and with which key (`billing`): the payer's own key; the platform key drawing on the
 *     owner's trial for a trial-mode project (`trial`); the platform key for platform features (`platform`);
 *  2. reserves the call's worst case before it (the usage area: prompt estimate + output tokens, against the
 *     tightest budget under the owner's lock), the output capped to what the budget has left — 429
 *     `token_budget_exceeded` when not even the minimum fits;
 *  3. calls the purpose's model (model-tiers.ts) on the configured vendor with the caller's cancellation signal;
 *  4. records the real usage, settling the reservation in the same statement (source = the purpose), or
 *     releases the reservation when the call failed;
 *  5. maps a provider failure to `ModelError`: 502 `llm_error` with its `kind` and the caller's sentence (the
 *     provider's own message never reaches an answer).
 *
 * Each call, whatever its outcome, is reported once to `onCall` (the place to count model calls, tokens and
 * latency).
 */
import { Upstream } from '../../http/errors.ts';
import {
  LlmError,
  textOf,
  type LlmContent,
  type LlmErrorKind,
  type LlmMessage,
  type LlmProvider,
  type LlmResponse,
  type LlmTool,
  type LlmUsage,
} from '../../providers/llm/index.ts';
import type { LlmKeys } from '../accounts/llm-keys.ts';
import { estimateRequestTokens, type Owner } from '../usage/usage.rules.ts';
import type { KeySource } from '../usage/usage.repo.ts';
import type { BudgetScope, UsageService } from '../usage/usage.service.ts';
import { modelFor, type ModelPurpose } from './model-tiers.ts';

// The message shapes of a model call, for the areas that build prompts (they never import the providers).
export type { LlmContent, LlmErrorKind, LlmMessage, LlmResponse, LlmTool, LlmUsage };
export { textOf };

/** A failed model call: 502 `llm_error` `{kind}` with the caller's sentence. */
export class ModelError extends Upstream {
  constructor(
    /** Why the call failed: auth, rate_limit, overloaded, invalid_request, network, timeout, server, aborted. */
    readonly kind: LlmErrorKind,
    message: string,
    /** The provider's own message, for logs and run records; never put in an answer. */
    readonly providerMessage: string,
  ) {
    super(502, 'llm_error', message, { kind });
  }
}

/** Who pays for a call, and with which key. */
export interface Payer {
  /** The user billed: a project's owner, a transcript's uploader, or the caller for account-level features. */
  userId: number;
  /** The project the call is made for; a trial-mode project may use the platform key (drawing on the trial). */
  project?: { id: number; name?: string | null; trial_mode: boolean } | null;
  /** A run's worker (its daily budget applies) and the run. */
  workerId?: number | null;
  runId?: number | null;
  /**
   * Which key: `account` (default) the user's own, else the platform key for a trial-mode project; `platform` the
   * platform's (platform features such as the help assistant); `{given}` this key (an administrator's key test).
   */
  key?: 'account' | 'platform' | { given: string };
}

/** A payer with its key resolved (`billing`); reuse it for the calls of one job or stream. */
export interface Billing {
  readonly payer: Payer;
  /** The budget the call draws on: `own` key, the owner's `trial`, or the `platform`. */
  readonly keySource: KeySource;
  /** The key to call with. Never logged or answered. */
  readonly apiKey: string;
  /**
   * The payer's plan and role as read when the key was resolved (with the payer's own key, in one statement; else by
   * the usage area): the budgets of every call made with this billing (one run, job or stream) use them instead of
   * reading them per call. Read per call when absent.
   */
  readonly owner?: Owner;
}

/** One model call as an area asks for it. */
export interface ModelRequest {
  /** What the call is for: its model tier and the `source` of its usage row. */
  purpose: ModelPurpose;
  /** A model id instead of the purpose's tier (a run's model plan, a request that names one). */
  model?: string;
  system?: string;
  messages: LlmMessage[];
  tools?: LlmTool[];
  /** Output tokens wanted; the call gets fewer when the budget has less left (at least the usage area's minimum). */
  maxTokens: number;
  temperature?: number;
  /** Cancels the provider call (the call then fails with kind `aborted`). */
  signal?: AbortSignal;
  /** Streams the answer: each text delta as it arrives. */
  onText?: (delta: string) => void;
  /** The sentence of the 502 when the provider fails (default: "The model provider could not answer; try again."). */
  failure?: string;
  /** Called once the tokens are reserved, just before the provider is called; a throw cancels the call. */
  onReserved?: (grant: { maxTokens: number }) => void | Promise<void>;
  /**
   * Asked when the call failed: true when it was cut by a stop handing its run back (docs/ARCHITECTURE.md, Crash
   * recovery). The provider billed what it generated, so the reservation is charged (`settleCrashed`), not released.
   */
  chargeIfCut?: () => boolean;
}

/** A model call's answer. */
export interface ModelAnswer {
  response: LlmResponse;
  /** The answer's text blocks joined. */
  text: string;
  /** The model that answered. */
  model: string;
  usage: LlmUsage;
}

/** What `onCall` hears of each call. */
export interface ModelCallReport {
  purpose: ModelPurpose;
  vendor: LlmProvider['vendor'];
  model: string;
  keySource: KeySource;
  userId: number;
  projectId: number | null;
  /**
   * `ok`: answered (and recorded); `failed`: the provider failed (`errorKind`; none when something else failed
   * around the call); `refused`: no budget left (or the reservation could not be made).
   */
  outcome: 'ok' | 'failed' | 'refused';
  errorKind?: LlmErrorKind;
  /** Tokens used (null when the call made none). */
  usage: LlmUsage | null;
  /** Wall time of the provider call (ms; 0 when refused). */
  ms: number;
}

export interface ModelGatewayDeps {
  llm: LlmProvider;
  /** Which key a user's calls use (the accounts area). */
  keys: Pick<LlmKeys, 'forUser' | 'platform'>;
  /** Reservations, usage rows and budget checks (the usage area). */
  usage: Pick<UsageService, 'reserve' | 'record' | 'release' | 'assertNotSpent' | 'settleCrashed' | 'planOf'>;
  /** Hears every call once (metrics); must not throw. */
  onCall?: (report: ModelCallReport) => void;
  log: { warn(o: object, m: string): void };
}

/** The budget scope of a billed call (usage area). */
const scopeOf = (b: Billing): BudgetScope => ({
  userId: b.payer.userId,
  projectId: b.payer.project?.id ?? null,
  workerId: b.payer.workerId ?? null,
  runId: b.payer.runId ?? null,
  keySource: b.keySource,
  ...(b.owner ? { owner: b.owner } : {}),
});

const isBilling = (p: Payer | Billing): p is Billing => 'apiKey' in p && 'keySource' in p;

/** The payer of a call made for a project: its owner (own key, or the platform key in trial mode). */
export const projectPayer = (
  project: { id: number; owner_id: number; name: string; trial_mode: boolean },
  extra: { workerId?: number | null; runId?: number | null } = {},
): Payer => ({
  userId: project.owner_id,
  project: { id: project.id, name: project.name, trial_mode: project.trial_mode },
  ...extra,
});

/** The model gateway (module header); built once by the composition root. */
export function createModelGateway(deps: ModelGatewayDeps) {
  const { llm, usage, log } = deps;
  const report = (r: ModelCallReport) => {
    try {
      deps.onCall?.(r);
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'model call observer failed');
    }
  };

  /**
   * Resolve a payer's key and budget source (rule 1 of the module header), with the payer's plan for the budgets of
   * the calls made with it (`Billing.owner`). A billing is resolved only for calls about to be made: it starts
   * loading the vendor's SDK in the background (`LlmProvider.warm`; once per process), so the first call of a burst
   * (the first runs after a start) does not stall the event loop under every run at once while it loads.
   * @throws 400 `llm_key_required` (no own key and no trial), 503 `llm_unavailable` (the platform key is needed but
   *   not configured).
   */
  async function billing(payer: Payer): Promise<Billing> {
    llm.warm?.();
    let resolved: Omit<Billing, 'owner'>;
    if (payer.key === 'platform') resolved = { payer, apiKey: (await deps.keys.platform()).key, keySource: 'platform' };
    else if (typeof payer.key === 'object') resolved = { payer, apiKey: payer.key.given, keySource: 'platform' };
    else {
      const trial = !!payer.project?.trial_mode;
      const key = await deps.keys.forUser(payer.userId, { allowPlatform: trial });
      // The payer's plan was read with their key (one statement).
      const keySource = key.source === 'own' ? 'own' : trial ? 'trial' : 'platform';
      return { payer, apiKey: key.key, keySource, owner: key.owner };
    }
    return { ...resolved, owner: await usage.planOf(payer.userId) };
  }

  return {
    /** The configured vendor (`LLM_PROVIDER`). */
    vendor: llm.vendor,

    billing,

    /**
     * Refuse when a budget the payer's calls draw on is already spent (checked before a run or a stream starts).
     * @throws 429 `token_budget_exceeded` `{scope, used, cap, plan, worker_id, resets_at}`.
     */
    assertNotSpent: (b: Billing): Promise<void> => usage.assertNotSpent(scopeOf(b)),

    /**
     * One metered model call (the module header's steps). `who` is a payer, or one already resolved by `billing`.
     * @returns the answer, its text, the model that answered and the tokens used.
     * @throws 400 `llm_key_required`, 503 `llm_unavailable` (key); 429 `token_budget_exceeded` (budget);
     *   `ModelError` 502 `llm_error` `{kind}` (the provider failed or the call was aborted).
     */
    async complete(who: Payer | Billing, req: ModelRequest): Promise<ModelAnswer> {
      const b = isBilling(who) ? who : await billing(who);
      const scope = scopeOf(b);
      const model = req.model ?? modelFor(req.purpose, llm.vendor);
      const base = {
        purpose: req.purpose,
        vendor: llm.vendor,
        model,
        keySource: b.keySource,
        userId: scope.userId,
        projectId: scope.projectId,
      };
      // What the call is (project name, model, purpose) travels with the reservation for the usage area to keep.
      const reserving = { ...scope, projectName: b.payer.project?.name ?? null };
      const call = {
        promptTokens: estimateRequestTokens({ system: req.system, messages: req.messages, tools: req.tools }),
        maxTokens: req.maxTokens,
        model,
        source: req.purpose,
      };
      let grant: { id: number | null; maxTokens: number };
      try {
        grant = await usage.reserve(reserving, call);
      } catch (err) {
        report({ ...base, outcome: 'refused', usage: null, ms: 0 });
        throw err;
      }
      const release = async () => {
        if (grant.id !== null)
          await usage.release(grant.id).catch((err) => {
            // It expires by itself (RESERVATION_TTL_MS).
            log.warn({ err: (err as Error).message }, 'model call reservation not released');
          });
      };
      const started = performance.now();
      let res: LlmResponse;
      try {
        await req.onReserved?.({ maxTokens: grant.maxTokens });
        res = await llm.complete(
          {
            model,
            system: req.system,
            messages: req.messages,
            tools: req.tools,
            maxTokens: grant.maxTokens,
            temperature: req.temperature,
            apiKey: b.apiKey,
            signal: req.signal,
          },
          req.onText ? (e) => req.onText!(e.delta) : undefined,
        );
      } catch (err) {
        if (grant.id !== null && req.chargeIfCut?.())
          await usage.settleCrashed({ ids: [grant.id] }).catch((e) => {
            log.warn({ err: (e as Error).message }, 'cut model call not charged');
          });
        else await release();
        const kind = err instanceof LlmError ? err.kind : undefined;
        report({ ...base, outcome: 'failed', errorKind: kind, usage: null, ms: performance.now() - started });
        if (!(err instanceof LlmError)) throw err;
        throw new ModelError(err.kind, req.failure ?? 'The model provider could not answer; try again.', err.message);
      }
      const ms = performance.now() - started;
      const answered = res.model || model;
      try {
        await usage.record({
          userId: scope.userId,
          projectId: scope.projectId,
          projectName: b.payer.project?.name ?? null,
          workerId: scope.workerId,
          runId: scope.runId,
          model: answered,
          source: req.purpose,
          keySource: b.keySource,
          usage: res.usage,
          reservationId: grant.id,
        });
      } catch (err) {
        // The answer was paid for; its reservation keeps counting the tokens until it expires.
        log.warn({ err: (err as Error).message, purpose: req.purpose }, 'model call usage not recorded');
      }
      report({ ...base, model: answered, outcome: 'ok', usage: res.usage, ms });
      return { response: res, text: textOf(res), model: answered, usage: res.usage };
    },
  };
}

export type ModelGateway = ReturnType<typeof createModelGateway>;
