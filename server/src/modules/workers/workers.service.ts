/**
 * Workers (docs/ARCHITECTURE.md, Projects, workers, plan limits and onboarding):
 * CRUD under the plan limits, presets, templates, order, icons and avatars, the messenger bot of a
 * worker (bind, read masked, remove, notify), activity feed and runtime figures.
 */
import type { AccountsRepo } from '../accounts/accounts.repo.ts';
import path from 'node:path';
import type { Updateable } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { Actor } from '../../http/auth.ts';
import { BadRequest, Forbidden, NotFound, Upstream } from '../../http/errors.ts';
import { rulesProblem, storedRules } from '../runtime/approvals.rules.ts';
import type { Access, ProjectRef } from '../../access/access.ts';
import type { ActivityLog } from '../../lib/activity.ts';
import type { BlobStorage } from '../../storage/storage.ts';
import type { Sealer } from '../../secrets/crypto.ts';
import { MessengerUnavailable, type InlineButton, type Messenger } from '../../providers/messenger/messenger.ts';
import { reportedWorkerStatus } from '../runtime/runtime.rules.ts';
import type { ProjectsRepo } from '../projects/projects.repo.ts';
import type { UsageService } from '../usage/usage.service.ts';
import { WORKER_PRESETS } from './presets.ts';
import { MODEL_TIERS, pickModelPlan } from '../models/model-tiers.ts';
import { projectPayer, type ModelGateway } from '../models/model-gateway.ts';
import { normalizeWorker, toWorkerView, type WorkerInput, type WorkerView, type WorkersRepo } from './workers.repo.ts';
import { bindBot, maskBotToken, validateBotToken } from './bot-binding.ts';
import { IMAGE_MIME, type ImageKind } from './workers.rules.ts';

/** Activity-log types shown in a worker's feed (docs/ARCHITECTURE.md, Worker runtime). */
export const WORKER_ACTIVITY_TYPES = [
  'git_commit',
  'skill_loaded',
  'skill_unloaded',
  'issue_pick',
  'issue_close',
  'issue_log',
  'token_budget',
  'session_start',
];
/** A terminal session is live when its heartbeat (`session_seen_at`) is this recent. */
export const SESSION_LIVE_MS = 60 * 1000;
/** Output-token bound of a prompt generation. */
export const PROMPT_MAX_TOKENS = 1500;
const PROMPT_WRITER_SYSTEM =
  'You write system prompts for AI workers of a software team. Given what the worker is for and a description, answer with the system prompt only: who the worker is, what it is responsible for, how it works with issues (take, log progress, close), its boundaries, and its tone. Follow the description where it says more. Second person, under 400 words, no preamble.';

/**
 * The request text of a prompt generation: the project, the worker's name, what it is for (`role`) and the
 * further description when given.
 */
function promptRequest(projectName: string, body: { role: string; label?: string; description?: string }): string {
  const lines = [
    `Project: ${projectName}`,
    `Worker: ${body.label?.trim() || '(unnamed)'}`,
    `What the worker is for: ${body.role.trim()}`,
  ];
  if (body.description?.trim()) lines.push(`Description:\n${body.description.trim()}`);
  return lines.join('\n');
}

/** What the workers service uses. */
export interface WorkersDeps {
  repo: WorkersRepo;
  /** The owner's projects (plan limit, `GET /workers`) and, for the operator, every worker's project. */
  projects: Pick<ProjectsRepo, 'ownerProjectIds' | 'ownedBy' | 'namesAndOwners'>;
  /** Owner e-mails of the operator's `GET /workers` (the accounts area). */
  accounts: Pick<AccountsRepo, 'emails'>;
  access: Access;
  activity: ActivityLog;
  storage: BlobStorage;
  sealer: Sealer;
  messenger: Messenger;
  disableNotify: boolean;
  usage: Pick<
    UsageService,
    'lockForCreation' | 'assertPlanAllows' | 'planOf' | 'todayFor' | 'capFor' | 'dailyForWorker'
  >;
  /** Whether an agent run of the worker is live (the runtime area). */
  runs: { hasLiveRun(workerId: number): Promise<boolean> };
  /** The metered model call (prompt generation). */
  models: Pick<ModelGateway, 'complete'>;
  /**
   * The messenger area's pollers: `changed` after a bot is bound, unbound or its worker deleted (every instance
   * reconciles at once); `started` waits briefly until an instance polls the bot.
   */
  bots: { changed(workerId: number): Promise<void>; started(botId: string, waitMs?: number): Promise<boolean> };
  /** The project's outside MCP servers: a worker's `mcp_servers` must name registered ones (the mcp area). */
  mcpServers: { checkNames(projectId: number, names: string[]): Promise<void> };
}

/** The workers service (module header); built once by the composition root. */
export function createWorkersService(deps: WorkersDeps) {
  const { repo, access, activity, storage, sealer, messenger } = deps;

  /** The worker `id` of project `p`. @throws 404 `worker_not_found`. */
  async function workerRow(p: ProjectRef, id: number) {
    const row = await repo.row(p.id, id);
    if (!row) throw new NotFound(`Worker ${id} was not found in this project.`, 'worker_not_found');
    return row;
  }

  return {
    /**
     * `POST /projects/:name/workers/generate-prompt` `{role, label?, description?, model?}`: write a worker's
     * system prompt with the LLM from what the worker is for (`role`), its name and the further description
     * (metered through the model gateway, purpose `generate_prompt`; the project owner pays).
     * @returns `{system_prompt, model, usage}`. @throws 400 `llm_key_required`, 429 `token_budget_exceeded`,
     *   503 `llm_unavailable`, 502 `llm_error`.
     */
    async generatePrompt(
      actor: Actor,
      name: string,
      body: { role: string; label?: string; description?: string; model?: string },
    ) {
      const project = await access.project(actor, name);
      const a = await deps.models.complete(projectPayer(project), {
        purpose: 'generate_prompt',
        model: body.model ? pickModelPlan({ messageModel: body.model }).models[0] : undefined,
        maxTokens: PROMPT_MAX_TOKENS,
        temperature: 0.3,
        system: PROMPT_WRITER_SYSTEM,
        messages: [{ role: 'user', content: promptRequest(project.display_name, body) }],
        failure: 'The model provider could not write the prompt; try again.',
      });
      const prompt = a.text.trim();
      if (!prompt) throw new Upstream(502, 'llm_error', 'The model gave an empty answer; try again.');
      const u = a.usage;
      return {
        system_prompt: prompt,
        model: a.model,
        usage: {
          input_tokens: u.input_tokens,
          output_tokens: u.output_tokens,
          total_tokens: u.input_tokens + u.output_tokens + u.cache_tokens,
        },
      };
    },

    /** GET /workers: the caller's workers across projects; the operator sees every user's (with `owner_email`). */
    async listAll(actor: Actor) {
      if (!actor.isOperator) {
        const names = new Map((await deps.projects.ownedBy(actor.id)).map((p) => [p.id, p.name]));
        const rows = await repo.summaries([...names.keys()]);
        return {
          workers: rows.flatMap(({ project_id, ...r }) => {
            const project_name = names.get(project_id);
            return project_name === undefined ? [] : [{ ...r, project_name }];
          }),
        };
      }
      const rows = await repo.summaries(null);
      const projects = await deps.projects.namesAndOwners([...new Set(rows.map((r) => r.project_id))]);
      const emails = await deps.accounts.emails([...new Set([...projects.values()].map((p) => p.owner_id))]);
      return {
        workers: rows.flatMap(({ project_id, ...r }) => {
          const p = projects.get(project_id);
          const owner_email = p && emails.get(p.owner_id);
          return p && owner_email !== undefined ? [{ ...r, project_name: p.name, owner_email }] : [];
        }),
      };
    },

    /** GET /workers/presets: the 13 presets. */
    presets: () => ({ presets: WORKER_PRESETS }),

    /** GET /model-tiers: tiers, role → tier defaults, fallback tier. */
    modelTiers: () => ({ ...MODEL_TIERS, tiers: MODEL_TIERS.tiers.map(({ openai: _vendorModel, ...tier }) => tier) }),

    /** GET /workers/templates: the caller's templates and public ones. */
    async listTemplates(actor: Actor) {
      const rows = await repo.templatesFor(actor.id);
      return { templates: rows.map(({ owner_id, ...r }) => ({ ...r, owner: owner_id === actor.id })) };
    },
    /** POST /workers/templates `{name, description?, config, is_public?}` → `{ok, id}`. */
    async createTemplate(
      actor: Actor,
      body: { name: string; description?: string; config: Record<string, unknown>; is_public?: boolean },
    ) {
      const id = await repo.insertTemplate({
        ownerId: actor.id,
        name: body.name.trim(),
        description: body.description ?? '',
        config: body.config,
        isPublic: body.is_public ?? false,
      });
      return { ok: true, id };
    },
    /** DELETE /workers/templates/:id: owner only. @throws 404, 403 `not_template_owner`. */
    async deleteTemplate(actor: Actor, id: number) {
      const row = await repo.templateOwner(id);
      if (!row) throw new NotFound('Template not found.', 'template_not_found');
      if (row.owner_id !== actor.id)
        throw new Forbidden('Only the owner may delete this template.', 'not_template_owner');
      await repo.deleteTemplate(id, actor.id);
      return { ok: true };
    },

    /** GET /projects/:name/workers: the project's workers in their order. */
    async list(actor: Actor, name: string): Promise<{ workers: WorkerView[] }> {
      const p = await access.project(actor, name);
      const rows = await repo.listViews(p.id);
      return { workers: rows.map((r) => toWorkerView(r, p.name)) };
    },

    /**
     * POST /projects/:name/workers: one worker (fields or `preset`), under the owner's worker limit.
     * @throws 402 `plan_limit_reached` (workers_limit), 400 `unknown_preset`/`invalid_worker`.
     */
    async create(actor: Actor, name: string, input: WorkerInput): Promise<WorkerView> {
      const p = await access.project(actor, name);
      const w = normalizeWorker(input);
      await deps.mcpServers.checkNames(p.id, w.mcp_servers);
      const { plan } = await deps.usage.planOf(p.owner_id);
      return repo.transaction(async (tx) => {
        await deps.usage.lockForCreation(tx, p.owner_id);
        deps.usage.assertPlanAllows(plan, actor.isAdmin, {
          workers: { current: await repo.count(tx, await deps.projects.ownerProjectIds(p.owner_id, tx)), add: 1 },
        });
        const [created] = await repo.insert(tx, p, [w]);
        await activity.record(
          {
            type: 'worker_created',
            userId: actor.id,
            actor: actor.email,
            projectId: p.id,
            workerId: created.id,
            title: `Worker ${created.label} created`,
            payload: { label: created.label, role: created.role, project: p.name },
          },
          tx,
        );
        return created;
      });
    },

    /** PUT /projects/:name/workers/:id: change the given fields. */
    async update(
      actor: Actor,
      name: string,
      id: number,
      input: WorkerInput & { avatar_pack?: string },
    ): Promise<WorkerView> {
      const p = await access.project(actor, name);
      await workerRow(p, id);
      if (input.focus_dirs) normalizeWorker({ label: 'x', focus_dirs: input.focus_dirs });
      if (input.mcp_servers) await deps.mcpServers.checkNames(p.id, input.mcp_servers);
      const patch: Record<string, unknown> = { updated_at: new Date() };
      for (const k of [
        'label',
        'icon',
        'type',
        'model',
        'max_turns',
        'system_prompt',
        'prompt_style',
        'role',
        'avatar_pack',
      ] as const)
        if (input[k] !== undefined)
          patch[k] = typeof input[k] === 'string' && k === 'label' ? (input[k] as string).trim() : input[k];
      if (input.approvals) {
        const problem = rulesProblem(input.approvals);
        if (problem) throw new BadRequest('invalid_approval_rule', problem);
        input = { ...input, approvals: storedRules(input.approvals) };
      }
      for (const k of ['tools', 'focus_dirs', 'context_assets', 'approvals'] as const)
        if (input[k] !== undefined) patch[k] = JSON.stringify(input[k]);
      if (input.mcp_servers !== undefined) patch.mcp_servers = JSON.stringify([...new Set(input.mcp_servers)]);
      return toWorkerView(await repo.update(p.id, id, patch as Updateable<DB['workers']>), p.name);
    },

    /** DELETE /projects/:name/workers/:id → `{ok, id}`; its avatar and icon blobs go too. */
    async remove(actor: Actor, name: string, id: number) {
      const p = await access.project(actor, name);
      const w = await workerRow(p, id);
      await repo.remove(p.id, id);
      if (w.messenger_token_enc) await deps.bots.changed(id);
      for (const key of [w.avatar_key, w.icon_key]) if (key) await storage.delete(key);
      return { ok: true, id };
    },

    /**
     * POST /projects/:name/workers/reorder `{order}`: listed ids first (unknown ids ignored), the rest appended in
     * their order.
     */
    async reorder(actor: Actor, name: string, order: number[]) {
      const p = await access.project(actor, name);
      return repo.transaction(async (tx) => {
        const ids = await repo.orderedIds(tx, p.id);
        const known = new Set(ids);
        const seen = new Set<number>();
        const first = order.filter((id) => known.has(id) && !seen.has(id) && seen.add(id));
        const final = [...first, ...ids.filter((id) => !seen.has(id))];
        for (let i = 0; i < final.length; i++) await repo.setPosition(tx, p.id, final[i], i);
        return { ok: true, count: final.length, order: final };
      });
    },

    /**
     * Store an image as the worker's `icon` or `avatar`; `read` reads and checks the upload (called after the
     * access check). @returns `{ok, url}`.
     */
    async setImage(
      actor: Actor,
      name: string,
      id: number,
      which: 'icon' | 'avatar',
      read: () => Promise<{ data: Buffer; kind: ImageKind }>,
    ) {
      const p = await access.project(actor, name);
      const w = await workerRow(p, id);
      const img = await read(); // only after the access check: a stranger's upload is never read
      const key = `worker-${which}s/${id}.${img.kind}`;
      const old = which === 'icon' ? w.icon_key : w.avatar_key;
      await storage.put(key, img.data);
      if (which === 'icon') await repo.setIcon(id, key);
      else await repo.setAvatar(id, key);
      if (old && old !== key) await storage.delete(old);
      return { ok: true, url: `/api/crm/projects/${encodeURIComponent(p.name)}/workers/${id}/${which}` };
    },

    /** The worker's icon or avatar bytes. @throws 404 `avatar_not_found` / `icon_not_found`. */
    async getImage(actor: Actor, name: string, id: number, which: 'icon' | 'avatar') {
      const p = await access.project(actor, name);
      const w = await workerRow(p, id);
      const key = which === 'icon' ? w.icon_key : w.avatar_key;
      const data = key ? await storage.get(key) : undefined;
      if (!key || !data) throw new NotFound(`This worker has no ${which}.`, `${which}_not_found`);
      return { data, mime: IMAGE_MIME[path.extname(key).slice(1) as ImageKind] };
    },

    /** DELETE …/avatar: remove it and reset `avatar_pack` to `role`. */
    async deleteAvatar(actor: Actor, name: string, id: number) {
      const p = await access.project(actor, name);
      const w = await workerRow(p, id);
      await repo.clearAvatar(id);
      if (w.avatar_key) await storage.delete(w.avatar_key);
      return { ok: true, avatar_pack: 'role' };
    },

    /** GET …/telegram-token → `{bound, token_masked, bot_username}` (never the token). */
    async getBot(actor: Actor, name: string, id: number) {
      const p = await access.project(actor, name);
      const w = await workerRow(p, id);
      let masked: string | null = null;
      if (w.messenger_token_enc) {
        try {
          masked = maskBotToken(sealer.open(w.messenger_token_enc));
        } catch {
          masked = '(unreadable: bind the token again)';
        }
      }
      return { bound: !!w.messenger_token_enc, token_masked: masked, bot_username: w.messenger_bot_username };
    },

    /**
     * POST …/telegram-token `{token}`: validated with getMe, stored sealed; the messenger area's pollers pick
     * the bot up at once. `started` is true once an instance polls it (waits up to 3 s).
     * @throws 400 `invalid_bot_token`, 409 `bot_already_bound`, 502 `messenger_unavailable`.
     */
    async bindBot(actor: Actor, name: string, id: number, token: string) {
      const p = await access.project(actor, name);
      await workerRow(p, id);
      const bot = await validateBotToken(messenger, token);
      await bindBot(repo, sealer, id, token, bot);
      await activity.record({
        type: 'worker_bot_bound',
        userId: actor.id,
        actor: actor.email,
        projectId: p.id,
        workerId: id,
        title: `Bot @${bot.username} bound`,
        payload: { bot_username: bot.username },
      });
      await deps.bots.changed(id);
      return { ok: true, started: await deps.bots.started(bot.id), bot_username: bot.username };
    },

    /** DELETE …/telegram-token → `{ok, removed}`. */
    async unbindBot(actor: Actor, name: string, id: number) {
      const p = await access.project(actor, name);
      const w = await workerRow(p, id);
      await repo.clearBot(id);
      await deps.bots.changed(id);
      return { ok: true, removed: !!w.messenger_token_enc };
    },

    /**
     * POST …/notify `{event?, text, buttons?}`: send through the worker's bot to the owner's chat.
     * A silent no-op (`sent:false`) without a bound bot or with CRM_DISABLE_MESSENGER_NOTIFY=1.
     * @throws 502 `messenger_unavailable` when the messenger refuses the message.
     */
    async notify(
      actor: Actor,
      name: string,
      id: number,
      body: { event?: string; text: string; buttons?: InlineButton[] },
    ) {
      const p = await access.project(actor, name);
      const w = await workerRow(p, id);
      if (deps.disableNotify || !w.messenger_token_enc) return { ok: true, sent: false };
      // The owner's chat (their chat id, else their user id), through the access rules.
      const { actor: owner } = await access.ownerActor(p.id);
      const text = body.event ? `[${body.event}] ${body.text}` : body.text;
      try {
        await messenger.sendMessage(sealer.open(w.messenger_token_enc), {
          chatId: owner.chat_id,
          text,
          buttons: body.buttons?.length ? body.buttons.map((b) => [b]) : undefined,
        });
      } catch (err) {
        if (err instanceof MessengerUnavailable)
          throw new Upstream(502, 'messenger_unavailable', 'The messenger did not accept the message.');
        throw err;
      }
      return { ok: true, sent: true };
    },

    /**
     * POST …/suggest-bot-username → `{candidates}`: five names `<project>_<worker>_bot`, then numbered
     * fallbacks `<project>_<worker>N_bot`; hyphens and other characters outside [a-z0-9_] removed; at most
     * 32 characters, the worker part cut first, then the project part.
     */
    async suggestBotUsername(actor: Actor, name: string, id: number) {
      const p = await access.project(actor, name);
      const w = await workerRow(p, id);
      const clean = (s: string) =>
        s
          .toLowerCase()
          .replace(/[^a-z0-9_]/g, '')
          .replace(/_+/g, '_')
          .replace(/^_|_$/g, '');
      const proj = clean(p.name) || 'project';
      const work = clean(w.label) || `worker${id}`;
      const make = (suffix: string) => {
        const tail = `${suffix}_bot`;
        let pp = proj;
        let ww = work;
        const over = () => pp.length + 1 + ww.length + tail.length - 32;
        if (over() > 0) ww = ww.slice(0, Math.max(1, ww.length - over()));
        if (over() > 0) pp = pp.slice(0, Math.max(1, pp.length - over()));
        return `${pp}_${ww}${tail}`;
      };
      return { candidates: ['', '1', '2', '3', '4'].map(make) };
    },

    /**
     * GET …/activity → `{events}`: the last 50 of the worker's activity-log events of the feed types and its
     * daily token snapshots (`token_budget`, one per UTC day with usage), newest first.
     */
    async activity(actor: Actor, name: string, id: number) {
      const p = await access.project(actor, name);
      await workerRow(p, id);
      const logs = await activity.list({ projectId: p.id, workerId: id, types: WORKER_ACTIVITY_TYPES }, 50);
      const days = await deps.usage.dailyForWorker(id, 50);
      const events = [
        ...logs.map((l) => ({ type: l.type, title: l.title ?? l.type, detail: l.detail, when: l.created_at })),
        ...days.map((d) => ({
          type: 'token_budget',
          title: `${d.n.toLocaleString('en-US')} tokens on ${d.day}`,
          detail: d.day,
          when: d.last,
        })),
      ];
      events.sort((a, b) => new Date(b.when).getTime() - new Date(a.when).getTime());
      return { events: events.slice(0, 50) };
    },

    /**
     * GET …/runtime: status (crash rule: stored working, no live session, status older than 10 minutes →
     * idle), `tokens_today` (UTC day), the owner's plan cap and the percentage (beta: cap null, pct 0).
     */
    async runtime(actor: Actor, name: string, id: number) {
      const p = await access.project(actor, name);
      const w = await workerRow(p, id);
      const now = Date.now();
      // A live session: a terminal session's heartbeat, or an agent run of this worker with a fresh heartbeat.
      const live =
        (!!w.session_seen_at && now - w.session_seen_at.getTime() < SESSION_LIVE_MS) ||
        (await deps.runs.hasLiveRun(id));
      const status = reportedWorkerStatus(w, live, new Date(now));
      const today = await deps.usage.todayFor(id);
      const cap = await deps.usage.capFor(p.owner_id);
      return {
        status,
        status_started_at: w.status_started_at,
        current_skill: status === 'working' ? w.current_skill : null,
        tokens_today: today,
        tokens_pct: cap === null ? 0 : Math.min(100, Math.round((today / cap) * 1000) / 10),
        tokens_cap: cap,
      };
    },
  };
}
export type WorkersService = ReturnType<typeof createWorkersService>;
