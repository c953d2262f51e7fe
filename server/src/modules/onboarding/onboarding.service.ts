/**
 * Onboarding (docs/api.md, The main resources): the setup
 * wizard with the trial, trial status, usage, the 5-step checklist and the video slots.
 */
import type { Static } from 'typebox';
import type { ValidateFunction } from 'ajv';
import { requireAdmin } from '../../access/access.ts';
import type { Actor } from '../../http/auth.ts';
import { BadRequest, validationDetails, type ValidationError } from '../../http/errors.ts';
import { findTextProblem, invalidInput, prepareSchema, requestAjv } from '../../http/input.ts';
import type { ActivityLog } from '../../lib/activity.ts';
import type { AccountsRepo } from '../accounts/accounts.repo.ts';
import type { SettingsService } from '../accounts/settings.service.ts';
import type { ProjectsService } from '../projects/projects.service.ts';
import type { UsageService } from '../usage/usage.service.ts';
import type { StorageQuota } from '../usage/usage.storage.ts';
import type { OnboardingRepo, ProgressRow } from './onboarding.repo.ts';
import { type Progress, SetupConfig } from './onboarding.schemas.ts';

export const STEPS = ['workers', 'cli', 'skill', 'bot', 'issue'] as const;
export type Step = (typeof STEPS)[number];
export const VIDEO_SLOTS = ['overview', 'plan', 'workers', 'issue', 'bot', 'cli', 'notes', 'bridge'] as const;

/** Built-in video defaults: no video yet, a title per slot. */
export const DEFAULT_VIDEOS: Record<string, { url: string | null; seconds: number; title: string }> = {
  overview: { url: null, seconds: 0, title: 'A tour of the workspace' },
  plan: { url: null, seconds: 0, title: 'Plans and limits' },
  workers: { url: null, seconds: 0, title: 'Build your team of workers' },
  issue: { url: null, seconds: 0, title: 'Your first issue' },
  bot: { url: null, seconds: 0, title: 'Connect a messenger bot' },
  cli: { url: null, seconds: 0, title: 'Install the command-line client' },
  notes: { url: null, seconds: 0, title: 'Notes and sources' },
  bridge: { url: null, seconds: 0, title: 'Bridging your tools' },
};

/** The checklist as the progress routes answer it. */
export type ProgressView = Static<typeof Progress>;

export function createOnboardingService(deps: {
  repo: OnboardingRepo;
  /** Onboarding's reset clears the user's heard-source answer. */
  accounts: Pick<AccountsRepo, 'clearHeardSource'>;
  activity: ActivityLog;
  projects: Pick<ProjectsService, 'createProject' | 'trialProjects'>;
  settings: Pick<SettingsService, 'update'>;
  usage: Pick<UsageService, 'trial' | 'byProject' | 'forAccount'>;
  /** The account's storage figures: bytes used, its quota and every plan's (usage.storage.ts). */
  storage: Pick<StorageQuota, 'usageOf'>;
  /** Where uploads wait before they are moved (DATA_DIR/tmp). */
  tmpRoot: string;
  /** The checklist steps the user has done, read from the areas that hold them (services.ts). */
  done: { steps(userId: number): Promise<Step[]> };
}) {
  const { repo, activity, projects, settings } = deps;
  // The multipart field `config` is checked like a JSON body (the same validator and error details), compiled on
  // the first setup rather than at start (like the routes' validators, lib/lazy-compile.ts: ~40 ms of a start).
  let setupConfigCheck: ValidateFunction | undefined;
  const checkSetupConfig = () =>
    (setupConfigCheck ??= requestAjv(false).compile(prepareSchema(SetupConfig, false) as object));

  const view = (r?: ProgressRow): ProgressView => {
    const state = r?.state ?? {};
    return {
      steps: [...STEPS],
      state,
      completed_count: STEPS.filter((s) => state[s] === 'completed').length,
      total_steps: STEPS.length,
      completed_at: r?.completed_at ?? null,
      dismissed_at: r?.dismissed_at ?? null,
      source: r?.source ?? null,
      started_at: r?.started_at ?? null,
      updated_at: r?.updated_at ?? null,
    };
  };
  async function setupWith(
    actor: Actor,
    rawConfig: string | undefined,
    files: Array<{ name: string; tmpPath: string }>,
  ) {
    if (rawConfig === undefined)
      throw new BadRequest('invalid_request', 'The multipart field `config` (JSON) is required.');
    let parsed: unknown;
    try {
      parsed = JSON.parse(rawConfig);
    } catch {
      throw new BadRequest('invalid_request', 'The field `config` is not valid JSON.');
    }
    // A multipart field is not a JSON body: the central text check (NUL, unpaired surrogates, depth) runs here.
    const problem = findTextProblem(parsed, 'config', 'body');
    if (problem) throw invalidInput(problem);
    const check = checkSetupConfig();
    if (!check(parsed)) {
      const details = validationDetails(check.errors as ValidationError[], 'config');
      throw new BadRequest('invalid_request', `${details[0]?.path}: ${details[0]?.message}`, { details });
    }
    const config = parsed as SetupConfig;
    const llmKey = config.llmKey?.trim() ?? '';
    if (llmKey && (llmKey.length < 8 || /\s/.test(llmKey)))
      throw new BadRequest('invalid_llm_key', 'The LLM key must be at least 8 characters and contain no spaces.');
    const { project, workers, trial_activated } = await projects.createProject(
      actor,
      {
        displayName: config.displayName,
        projectName: config.projectName,
        niche: config.niche,
        teamPreset: config.teamPreset,
      },
      { workers: config.workers, grantTrial: !llmKey, files, source: 'onboarding' },
    );
    if (llmKey) await settings.update(actor, { llm_key: llmKey });
    return { ok: true, project, trial_activated, workers, files: files.map((f) => f.name) };
  }

  /**
   * Record a step's status (unchanged repeats write nothing): the progress row and the activity events
   * (`source` in their payload: web, cli, or auto for a step that ticked itself); the progress row after it.
   */
  async function record(
    actor: Actor,
    step: Step,
    status: 'completed' | 'skipped',
    source: 'web' | 'cli' | 'auto',
  ): Promise<ProgressRow> {
    return repo.transaction(async (tx) => {
      const cur = await repo.createAndLockProgress(tx, actor.id);
      if (cur.state[step] === status) return cur;
      const state = { ...cur.state, [step]: status };
      const now = new Date();
      const done = STEPS.every((s) => state[s] === 'completed');
      const completing = done && !cur.completed_at;
      const row = await repo.updateProgress(tx, actor.id, {
        state,
        // The row says where the user acted (web or cli); a step that ticked itself counts as the web's.
        source: source === 'cli' ? 'cli' : 'web',
        updated_at: now,
        ...(completing ? { completed_at: now } : {}),
      });
      await activity.record(
        {
          type: status === 'completed' ? 'onboarding_step_completed' : 'onboarding_step_skipped',
          userId: actor.id,
          actor: actor.email,
          title: `Onboarding step ${step} ${status}`,
          payload: { step, status, source },
        },
        tx,
      );
      if (completing) {
        await activity.record(
          {
            type: 'onboarding_completed',
            userId: actor.id,
            actor: actor.email,
            title: 'Onboarding completed',
            payload: { duration_ms: now.getTime() - cur.started_at.getTime(), source },
          },
          tx,
        );
      }
      return row;
    });
  }

  return {
    /**
     * POST /onboarding/setup: multipart `config` (SetupConfig JSON) + `files` (already saved under safe names).
     * A non-empty `llmKey` is stored as the account's key (sealed); an empty one with a verified e-mail and no
     * prior trial creates the project in trial mode with 100K tokens on the platform key.
     * @returns `{ok, project, trial_activated, workers, files}`. @throws 400 `invalid_request`, 402
     * `plan_limit_reached`, 409.
     */
    async setup(
      actor: Actor,
      readUpload: (tmpRoot: string) => Promise<{
        config: string | undefined;
        files: Array<{ name: string; tmpPath: string }>;
        cleanup: () => Promise<void>;
      }>,
    ) {
      const upload = await readUpload(deps.tmpRoot);
      try {
        return await setupWith(actor, upload.config, upload.files);
      } finally {
        await upload.cleanup();
      }
    },

    /** GET /account/trial-status: the trial (the usage area's one formula) and the tokens of each trial project. */
    async trialStatus(actor: Actor) {
      const info = await deps.usage.trial(actor.id);
      const rows = await projects.trialProjects(actor.id);
      const used = await deps.usage.byProject(
        actor.id,
        rows.map((r) => r.id),
      );
      return {
        email: actor.email,
        email_verified: actor.email_verified,
        trial_granted: info.granted,
        has_trial_active: info.active,
        total_remaining: info.remaining,
        total_granted: info.total_granted,
        projects: rows.map((r) => ({
          name: r.name,
          display_name: r.display_name,
          trial_mode: r.trial_mode,
          uses_platform_key: r.uses_platform_key,
          tokens_used: used.get(r.id) ?? 0,
        })),
      };
    },

    /**
     * GET /account/usage: the caller's newest 200 token-usage rows and totals over all their rows, and their storage
     * (`storage`: `used_bytes`, `quota_bytes`, `plan`, and every plan's quota in `quotas`; bytes, null = no quota).
     */
    async usage(actor: Actor) {
      return { ...(await deps.usage.forAccount(actor.id)), storage: await deps.storage.usageOf(actor.id) };
    },

    /**
     * GET /onboarding/progress. The checklist ticks itself: a step the user has done (`deps.done`: workers in a
     * project, a CLI device, a skill added, a bot bound, an issue) and that is not completed yet is recorded as
     * completed (source `auto`, the same events as a marked step). No record is created for an untouched user.
     */
    async progress(actor: Actor) {
      const cur = await repo.progress(actor.id);
      const missing = (await deps.done.steps(actor.id)).filter((s) => cur?.state[s] !== 'completed');
      let row = cur;
      for (const step of missing) row = await record(actor, step, 'completed', 'auto');
      return view(row);
    },

    /**
     * POST /onboarding/event `{step, status, source?}`. Identical repeats change nothing and write no event;
     * a change writes onboarding_step_completed/_skipped; reaching 5 of 5 stamps `completed_at` and writes
     * onboarding_completed with `duration_ms` (from `started_at`).
     * @throws 400 `unknown_step` / `unknown_status`.
     */
    async event(actor: Actor, body: { step: string; status: string; source?: string }) {
      if (!(STEPS as readonly string[]).includes(body.step))
        throw new BadRequest('unknown_step', `Unknown onboarding step; use one of ${STEPS.join(', ')}.`);
      if (body.status !== 'completed' && body.status !== 'skipped')
        throw new BadRequest('unknown_status', 'The status must be completed or skipped.');
      return view(await record(actor, body.step as Step, body.status, body.source === 'cli' ? 'cli' : 'web'));
    },

    /** POST /onboarding/dismiss: idempotent; the first dismiss writes onboarding_dismissed `{completed_count}`. */
    async dismiss(actor: Actor) {
      return repo.transaction(async (tx) => {
        const cur = await repo.createAndLockProgress(tx, actor.id);
        if (cur.dismissed_at) return view(cur);
        const row = await repo.updateProgress(tx, actor.id, { dismissed_at: new Date(), updated_at: new Date() });
        await activity.record(
          {
            type: 'onboarding_dismissed',
            userId: actor.id,
            actor: actor.email,
            title: 'Onboarding dismissed',
            payload: { completed_count: view(row).completed_count },
          },
          tx,
        );
        return view(row);
      });
    },

    /**
     * POST /onboarding/replay: clears the dismissal (step state untouched); onboarding_replayed when one was cleared.
     */
    async replay(actor: Actor) {
      return repo.transaction(async (tx) => {
        const cur = await repo.lockProgress(tx, actor.id);
        if (!cur?.dismissed_at) return view(cur);
        const row = await repo.updateProgress(tx, actor.id, { dismissed_at: null, updated_at: new Date() });
        await activity.record(
          {
            type: 'onboarding_replayed',
            userId: actor.id,
            actor: actor.email,
            title: 'Onboarding replayed',
            payload: {},
          },
          tx,
        );
        return view(row);
      });
    },

    /** POST /onboarding/reset: wipes progress and the heard-source field (projects stay); onboarding_reset. */
    async reset(actor: Actor) {
      await repo.transaction(async (tx) => {
        await repo.deleteProgress(tx, actor.id);
        await deps.accounts.clearHeardSource(tx, actor.id);
        await activity.record(
          { type: 'onboarding_reset', userId: actor.id, actor: actor.email, title: 'Onboarding reset', payload: {} },
          tx,
        );
      });
      return { ok: true };
    },

    /** GET /onboarding/videos: the 8 slots, stored values over the built-in defaults. */
    async videos() {
      const rows = await repo.videos();
      const videos: Record<string, { url: string | null; seconds: number; title: string }> = {};
      for (const slot of VIDEO_SLOTS) {
        const r = rows.find((x) => x.slot === slot);
        videos[slot] = r ? { url: r.url, seconds: r.seconds, title: r.title } : { ...DEFAULT_VIDEOS[slot] };
      }
      return { videos };
    },

    /**
     * PUT /onboarding/videos (admin, checked here as well as on the route: 403 `admin_required`): stores only known
     * slots, sanitized — `url` kept only when http(s) (else null), `seconds` a non-negative integer (else 0), `title`
     * trimmed to 120 characters (empty: the default title). Writes onboarding_videos_updated `{slots}`.
     */
    async putVideos(actor: Actor, input: Record<string, unknown>) {
      requireAdmin(actor);
      const slots = VIDEO_SLOTS.filter((s) => input[s] && typeof input[s] === 'object');
      await repo.transaction(async (tx) => {
        for (const slot of slots) {
          const v = input[slot] as Record<string, unknown>;
          let url: string | null = null;
          if (typeof v.url === 'string') {
            try {
              const u = new URL(v.url.trim());
              if (u.protocol === 'http:' || u.protocol === 'https:') url = u.toString().slice(0, 2000);
            } catch {
              url = null;
            }
          }
          const n = typeof v.seconds === 'number' ? v.seconds : typeof v.seconds === 'string' ? Number(v.seconds) : NaN;
          const seconds = Number.isFinite(n) && n >= 0 ? Math.min(Math.floor(n), 86_400) : 0;
          const title =
            (typeof v.title === 'string' ? v.title.replace(/\s+/g, ' ').trim().slice(0, 120) : '') ||
            DEFAULT_VIDEOS[slot].title;
          await repo.upsertVideo(tx, { slot, url, seconds, title, updatedBy: actor.email });
        }
        await activity.record(
          {
            type: 'onboarding_videos_updated',
            userId: actor.id,
            actor: actor.email,
            title: 'Onboarding videos updated',
            payload: { slots },
          },
          tx,
        );
      });
      return { ok: true, ...(await this.videos()) };
    },
  };
}

export type OnboardingService = ReturnType<typeof createOnboardingService>;
