/**
 * Projects (docs/ARCHITECTURE.md, Projects, workers, plan limits and onboarding): creation in one
 * transaction with its workers, an optional messenger bot and its working directory; reads and settings;
 * logs and metrics from the activity log; the active-issue binding.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Static } from 'typebox';
import type { Actor } from '../../http/auth.ts';
import { BadRequest, Conflict, NotFound } from '../../http/errors.ts';
import type { Access, ProjectRef } from '../../access/access.ts';
import type { ActivityLog } from '../../lib/activity.ts';
import type { BlobStorage } from '../../storage/storage.ts';
import type { Sealer } from '../../secrets/crypto.ts';
import type { Messenger } from '../../providers/messenger/messenger.ts';
import { TEAM_PRESETS, suggestTeamPreset } from './team-presets.ts';
import { normalizeWorker, type WorkerInput, type WorkerView, type WorkersRepo } from '../workers/workers.repo.ts';
import type { SettingsService } from '../accounts/settings.service.ts';
import type { UsageService } from '../usage/usage.service.ts';
import type { ProjectRow, ProjectsRepo } from './projects.repo.ts';
import type * as S from './projects.schemas.ts';
import { bindBot, validateBotToken } from '../workers/bot-binding.ts';
import { IMAGE_MIME, type ImageKind } from '../workers/workers.rules.ts';
import { asRules, rulesProblem, storedRules, type ApprovalRule } from '../runtime/approvals.rules.ts';

/** Technical names: 2–40 characters, lower-case letters, digits and inner hyphens or underscores. */
export const PROJECT_NAME_PATTERN = /^[a-z0-9](?:[a-z0-9_-]{0,38}[a-z0-9])?$/;

/** A project as the API shows it (the `Project` response schema). */
export type ProjectView = Static<typeof S.Project>;

const modelMode = (config: unknown): 'strict' | 'optimize' =>
  (config as any)?.modelMode === 'optimize' ? 'optimize' : 'strict';
const toView = (r: ProjectRow, workerCount: number): ProjectView => ({
  id: r.id,
  name: r.name,
  display_name: r.display_name,
  description: r.description,
  icon: r.icon,
  color: r.color,
  niche: r.niche,
  team_preset: r.team_preset,
  config: { modelMode: modelMode(r.config) },
  trial_mode: r.trial_mode,
  uses_platform_key: r.uses_platform_key,
  has_icon: !!r.icon_key,
  owner_id: r.owner_id,
  worker_count: workerCount,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

/** Either create body shape (docs/api.md, The main resources: Projects). */
export interface CreateProjectBody {
  displayName: string;
  projectName?: string;
  technical_name?: string;
  niche?: string;
  teamPreset?: string;
  description?: string;
  icon?: string;
  color?: string;
}

export interface CreateOptions {
  /** Workers to create with the project; when absent and `teamPreset` is given, the preset's team. */
  workers?: WorkerInput[];
  /** A bot token bound to the first worker (create-with-team). */
  messengerToken?: string;
  /** Onboarding setup: grant the trial in the same transaction. */
  grantTrial?: boolean;
  /** Files (already on disk, safe names) moved into the working directory inside the transaction. */
  files?: Array<{ name: string; tmpPath: string }>;
  source?: string;
}

/** Log categories of `GET /projects/:name/logs` → activity-log type prefixes. */
export const LOG_CATEGORIES: Record<string, string[]> = {
  all: [],
  project: ['project_'],
  workers: ['worker_'],
  issues: ['issue_', 'session_active_issue'],
  git: ['git_'],
  skills: ['skill_'],
  sessions: ['session_', 'cli_'],
  tokens: ['token_'],
  chat: ['browser_chat_message', 'cascade_'],
  onboarding: ['onboarding_'],
};

/** What the projects service uses. */
export interface ProjectsDeps {
  repo: ProjectsRepo;
  /** The workers created with a project, the plan's worker count and the bot of the first worker. */
  workers: Pick<WorkersRepo, 'count' | 'insert' | 'countByProject' | 'botHolder' | 'setBot'>;
  access: Access;
  activity: ActivityLog;
  storage: BlobStorage;
  sealer: Sealer;
  messenger: Messenger;
  usage: Pick<UsageService, 'trial' | 'grantTrial' | 'lockForCreation' | 'assertPlanAllows' | 'dailyForProject'>;
  settings: Pick<SettingsService, 'llmKey'>;
}

/** 409 `project_exists`: a project name names one project across the service, whoever owns it. */
const nameTaken = (name: string) =>
  new Conflict('project_exists', `A project named '${name}' already exists; choose another name.`, { name });

/** The projects service (module header); built once by the composition root. */
export function createProjectsService(deps: ProjectsDeps) {
  const { repo, workers: workersRepo, access, activity, storage, sealer, messenger, usage } = deps;

  async function view(projectId: number): Promise<ProjectView> {
    const row = await repo.row(projectId);
    return toView(row, (await workersRepo.countByProject([projectId])).get(projectId) ?? 0);
  }

  const hasOwnKey = async (userId: number): Promise<boolean> => !!(await deps.settings.llmKey(userId));

  /**
   * The one creation path: project + workers + optional bot + directory (+ trial, + files) atomically.
   * Validation and the messenger call happen before the transaction; the plan check runs inside it under
   * the owner's advisory lock. Any failure removes the directory and leaves no row.
   * @throws 400 `invalid_project_name`, `unknown_team_preset`, worker errors; 409 `project_exists`,
   *   `bot_already_bound`; 402 `plan_limit_reached`; 502 `messenger_unavailable`.
   */
  async function createProject(
    actor: Actor,
    body: CreateProjectBody,
    opts: CreateOptions = {},
  ): Promise<{ project: ProjectView; workers: WorkerView[]; trial_activated: boolean }> {
    const name = (body.projectName ?? body.technical_name ?? '').trim();
    if (!PROJECT_NAME_PATTERN.test(name)) {
      throw new BadRequest(
        'invalid_project_name',
        'The technical name must be 2–40 characters: lower-case letters, digits, hyphens or underscores, starting and ending with a letter or digit.',
      );
    }
    const displayName = body.displayName.trim();
    if (!displayName) throw new BadRequest('invalid_request', 'displayName must not be empty.');
    if (body.teamPreset && !TEAM_PRESETS[body.teamPreset])
      throw new BadRequest('unknown_team_preset', `There is no team preset '${body.teamPreset}'.`);
    const inputs: WorkerInput[] =
      opts.workers ?? (body.teamPreset ? TEAM_PRESETS[body.teamPreset].workers.map((preset) => ({ preset })) : []);
    const workers = inputs.map((w, i) => normalizeWorker(w, `workers[${i}]`));
    if (opts.messengerToken !== undefined && !workers.length)
      throw new BadRequest('invalid_request', 'A messenger token needs at least one worker to bind to.');
    const bot = opts.messengerToken !== undefined ? await validateBotToken(messenger, opts.messengerToken) : undefined;

    const trial = await usage.trial(actor.id);
    const grantTrial = !!opts.grantTrial && actor.email_verified && !trial.granted;
    const trialMode = grantTrial || (trial.active && !(await hasOwnKey(actor.id)));

    let dir: string | undefined;
    try {
      const result = await repo.transaction(async (tx) => {
        await usage.lockForCreation(tx, actor.id);
        if (await repo.nameTaken(tx, name)) throw nameTaken(name);
        usage.assertPlanAllows(actor.plan, actor.isAdmin, {
          projects: { current: await repo.countOwned(actor.id, tx), add: 1 },
          workers: {
            current: await workersRepo.count(tx, await repo.ownerProjectIds(actor.id, tx)),
            add: workers.length,
          },
        });
        const row = await repo.insert(tx, {
          owner_id: actor.id,
          name,
          display_name: displayName,
          description: body.description ?? '',
          icon: body.icon ?? null,
          color: body.color ?? null,
          niche: body.niche ?? null,
          team_preset: body.teamPreset ?? null,
          config: JSON.stringify({ modelMode: 'strict' }),
          trial_mode: trialMode,
          uses_platform_key: trialMode,
        });
        const created = await workersRepo.insert(tx, { id: row.id, name }, workers);
        if (bot && opts.messengerToken) {
          await bindBot(workersRepo, sealer, created[0].id, opts.messengerToken, bot, tx);
          created[0].bot_username = bot.username;
        }
        if (grantTrial) await usage.grantTrial(tx, actor.id, row.id);
        await activity.record(
          {
            type: 'project_created',
            userId: actor.id,
            actor: actor.email,
            projectId: row.id,
            title: `Project ${displayName} created`,
            payload: {
              name,
              team_preset: body.teamPreset ?? null,
              workers: created.length,
              trial_mode: trialMode,
              source: opts.source ?? 'web',
            },
          },
          tx,
        );
        for (const w of created) {
          await activity.record(
            {
              type: 'worker_created',
              userId: actor.id,
              actor: actor.email,
              projectId: row.id,
              workerId: w.id,
              title: `Worker ${w.label} created`,
              payload: { label: w.label, role: w.role, project: name },
            },
            tx,
          );
        }
        dir = access.projectDir(row.id);
        await fsp.rm(dir, { recursive: true, force: true });
        await fsp.mkdir(dir, { recursive: true });
        for (const f of opts.files ?? []) {
          await fsp.copyFile(f.tmpPath, path.join(dir, f.name));
        }
        return { row, created };
      });
      return {
        project: toView(result.row, result.created.length),
        workers: result.created,
        trial_activated: grantTrial,
      };
    } catch (err) {
      if (dir) await fsp.rm(dir, { recursive: true, force: true });
      if ((err as { code?: string }).code === '23505') throw nameTaken(name); // created meanwhile by another owner
      throw err;
    }
  }

  const ref = (actor: Actor, name: string): Promise<ProjectRef> => access.project(actor, name);

  return {
    createProject,

    /** An owner's trial-mode projects (trial status), oldest first. */
    trialProjects: (userId: number) => repo.trialProjects(userId),

    /** GET /projects: the caller's own projects, oldest first. */
    async list(actor: Actor): Promise<{ projects: ProjectView[] }> {
      const rows = await repo.rowsOf(actor.id);
      const counts = await workersRepo.countByProject(rows.map((r) => r.id));
      return { projects: rows.map((r) => toView(r, counts.get(r.id) ?? 0)) };
    },

    /** GET /projects/:name. */
    async get(actor: Actor, name: string): Promise<ProjectView> {
      const p = await ref(actor, name);
      return view(p.id);
    },

    /** POST /projects/create (either body shape). @returns the project and the workers of its team preset. */
    async create(actor: Actor, body: CreateProjectBody) {
      const { project, workers } = await createProject(actor, body);
      return { ok: true, project, workers };
    },

    /** POST /projects/create-with-team `{project, workers[], telegram?:{token}}`: all or nothing. */
    async createWithTeam(
      actor: Actor,
      body: { project: CreateProjectBody; workers: WorkerInput[]; telegram?: { token: string } },
    ) {
      const { project, workers } = await createProject(actor, body.project, {
        workers: body.workers,
        messengerToken: body.telegram?.token,
      });
      return { ok: true, project, workers, bot_username: workers[0]?.bot_username ?? null };
    },

    /** GET /projects/suggest-preset?niche=: `{preset_id}` by keyword. */
    suggestPreset: (niche: string) => ({ preset_id: suggestTeamPreset(niche) }),

    /**
     * GET /projects/:name/config → `{modelMode, approvals}` (the default approval rules of the project's workers,
     * docs/ARCHITECTURE.md, Approvals).
     */
    async getConfig(actor: Actor, name: string) {
      const p = await ref(actor, name);
      return { modelMode: modelMode(p.config), approvals: asRules(p.config.approvals) };
    },

    /**
     * PUT /projects/:name/config `{modelMode?, approvals?}`: the model mode (strict | optimize) and/or the default
     * approval rules (replaced; `[]` removes them; validated by the route's schema). A change of the rules is an
     * activity event. @returns the configuration as GET answers it.
     */
    async putConfig(
      actor: Actor,
      name: string,
      body: { modelMode?: 'strict' | 'optimize'; approvals?: ApprovalRule[] },
    ) {
      const p = await ref(actor, name);
      const before = asRules(p.config.approvals);
      const config: Record<string, unknown> = { ...p.config, modelMode: body.modelMode ?? modelMode(p.config) };
      if (body.approvals) {
        const problem = rulesProblem(body.approvals);
        if (problem) throw new BadRequest('invalid_approval_rule', problem);
        config.approvals = storedRules(body.approvals);
      }
      await repo.setConfig(p.id, config);
      const after = asRules(config.approvals);
      if (JSON.stringify(before) !== JSON.stringify(after))
        await activity.recordBestEffort({
          type: 'project_approvals_changed',
          userId: p.owner_id,
          actor: actor.email,
          projectId: p.id,
          title: after.length
            ? `Default approval rules set: ${after.map((r) => `${r.tool} (${r.mode})`).join(', ')}`.slice(0, 280)
            : 'Default approval rules removed',
          payload: { approvals: after },
        });
      return { modelMode: config.modelMode as 'strict' | 'optimize', approvals: after };
    },

    /** GET /projects/:name/protocol → `{protocol, updated_at}` (the project's rules text). */
    async getProtocol(actor: Actor, name: string) {
      const p = await ref(actor, name);
      return repo.protocol(p.id);
    },

    /** PUT /projects/:name/protocol `{protocol}`. */
    async putProtocol(actor: Actor, name: string, protocol: string) {
      const p = await ref(actor, name);
      return repo.setProtocol(p.id, protocol);
    },

    /** POST /projects/:name/upload-icon: `read` gives the PNG or GIF (checked by content), stored as a blob. */
    async setIcon(actor: Actor, name: string, read: () => Promise<{ data: Buffer; kind: ImageKind }>) {
      const p = await ref(actor, name);
      const img = await read(); // only after the access check: a stranger's upload is never read
      const key = `project-icons/${p.id}.${img.kind}`;
      const old = await repo.iconKey(p.id);
      await storage.put(key, img.data);
      await repo.setIconKey(p.id, key);
      if (old && old !== key) await storage.delete(old);
      return { ok: true, url: `/api/crm/projects/${encodeURIComponent(p.name)}/icon` };
    },

    /** GET /projects/:name/icon. @throws 404 when none. */
    async getIcon(actor: Actor, name: string) {
      const p = await ref(actor, name);
      const key = await repo.iconKey(p.id);
      const data = key ? await storage.get(key) : undefined;
      if (!key || !data) throw new NotFound('This project has no icon.', 'icon_not_found');
      return { data, mime: IMAGE_MIME[path.extname(key).slice(1) as ImageKind] ?? 'application/octet-stream' };
    },

    /**
     * GET /projects/:name/logs?category=&lines=: the newest `lines` activity-log entries of the category,
     * oldest first, as structured entries and as text lines `ISO [type] actor: title — detail`.
     */
    async logs(actor: Actor, name: string, q: { category: string; lines: number }) {
      const p = await ref(actor, name);
      const prefixes = LOG_CATEGORIES[q.category];
      if (!prefixes)
        throw new BadRequest(
          'unknown_category',
          `Unknown log category; use one of ${Object.keys(LOG_CATEGORIES).join(', ')}.`,
        );
      // A category entry ending in `_` is a type prefix; any other is an exact type.
      const rows = (
        await activity.list(
          {
            projectId: p.id,
            types: prefixes.filter((pre) => !pre.endsWith('_')),
            prefixes: prefixes.filter((pre) => pre.endsWith('_')),
          },
          q.lines,
        )
      ).reverse();
      return {
        category: q.category,
        entries: rows.map((r) => ({
          type: r.type,
          actor: r.actor,
          title: r.title,
          detail: r.detail,
          worker_id: r.worker_id,
          ts: r.created_at,
        })),
        lines: rows.map(
          (r) =>
            `${r.created_at.toISOString()} [${r.type}] ${r.actor ?? 'system'}: ${r.title ?? ''}${r.detail ? ` — ${r.detail}` : ''}`,
        ),
      };
    },

    /**
     * GET /projects/:name/metrics?since=&until= (dates, UTC, inclusive; default the last 30 days; at most
     * 366 days): per day the number of activity events (total and by type) and tokens used.
     * @throws 400 `invalid_range` when since is after until or the range is too long.
     */
    async metrics(actor: Actor, name: string, q: { since?: string; until?: string }) {
      const p = await ref(actor, name);
      const day = (s: string | undefined, fallback: Date) => {
        if (!s) return new Date(Date.UTC(fallback.getUTCFullYear(), fallback.getUTCMonth(), fallback.getUTCDate()));
        const d = new Date(s);
        if (Number.isNaN(d.getTime())) throw new BadRequest('invalid_range', `'${s}' is not a date.`);
        return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
      };
      const until = day(q.until, new Date());
      const since = day(q.since, new Date(until.getTime() - 29 * 86_400_000));
      const nDays = Math.round((until.getTime() - since.getTime()) / 86_400_000) + 1;
      if (nDays < 1) throw new BadRequest('invalid_range', '`since` must not be after `until`.');
      if (nDays > 366) throw new BadRequest('invalid_range', 'The range may span at most 366 days.');
      const end = new Date(until.getTime() + 86_400_000);
      const events = await activity.countByDay(p.id, since, end);
      const tokens = await usage.dailyForProject(p.id, since, end);
      const days = Array.from({ length: nDays }, (_, i) => ({
        date: new Date(since.getTime() + i * 86_400_000).toISOString().slice(0, 10),
        events: 0,
        tokens: 0,
        by_type: {} as Record<string, number>,
      }));
      const byDate = new Map(days.map((d) => [d.date, d]));
      for (const e of events) {
        const d = byDate.get(e.day);
        if (d) {
          d.events += Number(e.n);
          d.by_type[e.type] = Number(e.n);
        }
      }
      for (const t of tokens) {
        const d = byDate.get(t.day);
        if (d) d.tokens = Number(t.n ?? 0);
      }
      return {
        since: days[0].date,
        until: days[days.length - 1].date,
        days,
        totals: { events: days.reduce((s, d) => s + d.events, 0), tokens: days.reduce((s, d) => s + d.tokens, 0) },
      };
    },

    /**
     * POST /projects/:name/active-issue `{issue_id, title?}`: record the binding and a `session_active_issue` event
     * (source web).
     */
    async bindActiveIssue(actor: Actor, name: string, body: { issue_id: number; title?: string }) {
      const p = await ref(actor, name);
      const title = body.title?.trim() || null;
      const row = await repo.transaction(async (tx) => {
        const r = await repo.insertBinding(tx, {
          projectId: p.id,
          userId: actor.id,
          issueId: body.issue_id,
          title,
          source: 'web',
        });
        await activity.record(
          {
            type: 'session_active_issue',
            userId: actor.id,
            actor: actor.email,
            projectId: p.id,
            title: title ?? `Issue #${body.issue_id}`,
            payload: { issue_id: body.issue_id, title, source: 'web' },
          },
          tx,
        );
        return r;
      });
      return { ok: true, active_issue_id: row.issue_id, title: row.title, ts: row.created_at };
    },

    /** GET /projects/:name/active-issue: the latest binding within 7 days, else nulls. */
    async getActiveIssue(actor: Actor, name: string) {
      const p = await ref(actor, name);
      const row = await repo.latestBinding(p.id, new Date(Date.now() - 7 * 86_400_000));
      return row
        ? { active_issue_id: row.issue_id, title: row.title, ts: row.created_at }
        : { active_issue_id: null, title: null, ts: null };
    },
  };
}
export type ProjectsService = ReturnType<typeof createProjectsService>;
