/**
 * SQL of the workers area: `workers` and `worker_templates`. `createWorkersRepo(db)` is the area's
 * repository (the workers, projects, runtime and chat services use it); the standalone functions below
 * (`countWorkers`, `insertWorkers`, `workerRefs`) are the ones other areas call with their own executor.
 * Also here: worker input normalization (presets, defaults) and the public view. Every read filters by
 * project id, which the caller got from `access.project`.
 */
import { rulesProblem, storedRules } from '../runtime/approvals.rules.ts';
import type { Static } from 'typebox';
import { type Kysely, type Selectable, sql, type Transaction, type Updateable } from 'kysely';
import type { DB } from '../../db/types.ts';
import { BadRequest } from '../../http/errors.ts';
import { presetById, resolveModel } from './presets.ts';
import { MODEL_TIERS } from '../models/model-tiers.ts';
import type { Worker } from './workers.schemas.ts';

type Executor = Kysely<DB> | Transaction<DB>;

export interface WorkerInput {
  preset?: string;
  label?: string;
  icon?: string | null;
  type?: 'terminal' | 'messenger';
  model?: string | null;
  max_turns?: number;
  tools?: string[];
  system_prompt?: string;
  focus_dirs?: string[];
  context_assets?: string[];
  prompt_style?: string | null;
  role?: string | null;
  mcp_servers?: string[];
  approvals?: ApprovalRuleRow[];
}

/** One approval rule of a worker (docs/ARCHITECTURE.md, Approvals). */
export type ApprovalRuleRow = { tool: string; mode: 'always' | 'once_per_run' | 'never'; above?: number };

export type WorkerRow = Selectable<DB['workers']>;

/** A worker as the API shows it (the `Worker` response schema). */
export type WorkerView = Static<typeof Worker>;

/** Columns read for a worker view (never the sealed token). */
export const WORKER_COLUMNS = [
  'workers.id',
  'workers.label',
  'workers.icon',
  'workers.type',
  'workers.model',
  'workers.max_turns',
  'workers.tools',
  'workers.system_prompt',
  'workers.focus_dirs',
  'workers.context_assets',
  'workers.prompt_style',
  'workers.avatar_pack',
  'workers.role',
  'workers.mcp_servers',
  'workers.approvals',
  'workers.position',
  'workers.avatar_key',
  'workers.icon_key',
  'workers.messenger_bot_username',
  'workers.created_at',
  'workers.updated_at',
] as const;

type ViewRow = Pick<
  WorkerRow,
  | 'id'
  | 'label'
  | 'icon'
  | 'type'
  | 'model'
  | 'max_turns'
  | 'tools'
  | 'system_prompt'
  | 'focus_dirs'
  | 'context_assets'
  | 'prompt_style'
  | 'avatar_pack'
  | 'role'
  | 'mcp_servers'
  | 'approvals'
  | 'position'
  | 'avatar_key'
  | 'icon_key'
  | 'messenger_bot_username'
  | 'created_at'
  | 'updated_at'
>;

export function toWorkerView(r: ViewRow, projectName: string): WorkerView {
  return {
    id: r.id,
    label: r.label,
    icon: r.icon,
    type: r.type,
    model: r.model,
    max_turns: r.max_turns,
    tools: r.tools ?? [],
    system_prompt: r.system_prompt,
    focus_dirs: r.focus_dirs ?? [],
    context_assets: r.context_assets ?? [],
    prompt_style: r.prompt_style,
    avatar_pack: r.avatar_pack,
    role: r.role,
    mcp_servers: r.mcp_servers ?? [],
    approvals: r.approvals ?? [],
    position: r.position,
    has_avatar: !!r.avatar_key,
    has_icon: !!r.icon_key,
    bot_username: r.messenger_bot_username,
    project_name: projectName,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/** Number of workers of the given projects. */
export async function countWorkers(ex: Executor, projectIds: number[]): Promise<number> {
  if (!projectIds.length) return 0;
  const r = await ex
    .selectFrom('workers')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('project_id', 'in', projectIds)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

const safeRelDir = (d: string) =>
  d.length > 0 && !d.startsWith('/') && !d.includes('\0') && !d.split(/[\\/]/).includes('..');

/**
 * Merge a preset (when `preset` is given) with the explicit fields and check the result.
 * Defaults: type terminal, max_turns 20 (docs/ARCHITECTURE.md, Projects, workers, plan limits and onboarding), model
 * the fallback tier's model.
 * @throws BadRequest `unknown_preset`, `invalid_worker` (no label, unsafe focus directory).
 */
export function normalizeWorker(input: WorkerInput, where = 'worker') {
  const preset = input.preset ? presetById(input.preset) : undefined;
  if (input.preset && !preset)
    throw new BadRequest('unknown_preset', `${where}: there is no worker preset '${input.preset}'.`);
  const label = (input.label ?? preset?.label ?? '').trim();
  if (!label) throw new BadRequest('invalid_worker', `${where}: a label is required.`);
  const focus = input.focus_dirs ?? preset?.focus_dirs ?? [];
  const bad = focus.find((d) => !safeRelDir(d));
  if (bad !== undefined)
    throw new BadRequest('invalid_worker', `${where}: focus directories must be relative paths inside the project.`);
  const ruleProblem = input.approvals ? rulesProblem(input.approvals) : null;
  if (ruleProblem) throw new BadRequest('invalid_approval_rule', `${where}: ${ruleProblem}`);
  return {
    label,
    icon: input.icon !== undefined ? input.icon : (preset?.icon ?? null),
    type: input.type ?? preset?.type ?? 'terminal',
    model: resolveModel(input.model ?? preset?.model ?? MODEL_TIERS.fallbackTier),
    max_turns: input.max_turns ?? preset?.max_turns ?? 20,
    tools: input.tools ?? preset?.tools ?? [],
    system_prompt: input.system_prompt ?? preset?.system_prompt ?? '',
    focus_dirs: focus,
    context_assets: input.context_assets ?? preset?.context_assets ?? [],
    prompt_style: input.prompt_style !== undefined ? input.prompt_style : (preset?.prompt_style ?? null),
    role: input.role !== undefined ? input.role : (preset?.id ?? null),
    mcp_servers: [...new Set(input.mcp_servers ?? [])],
    approvals: storedRules(input.approvals ?? []),
  };
}
export type NormalizedWorker = ReturnType<typeof normalizeWorker>;

/** Insert normalized workers at the end of the project's order. @returns the inserted rows' views. */
export async function insertWorkers(
  tx: Executor,
  project: { id: number; name: string },
  workers: NormalizedWorker[],
): Promise<WorkerView[]> {
  if (!workers.length) return [];
  const { max } = await tx
    .selectFrom('workers')
    .select((eb) => eb.fn.max<number>('position').as('max'))
    .where('project_id', '=', project.id)
    .executeTakeFirstOrThrow();
  let pos = max === null || max === undefined ? 0 : Number(max) + 1;
  const rows = await tx
    .insertInto('workers')
    .values(
      workers.map((w) => ({
        project_id: project.id,
        label: w.label,
        icon: w.icon,
        type: w.type,
        model: w.model,
        max_turns: w.max_turns,
        tools: JSON.stringify(w.tools),
        system_prompt: w.system_prompt,
        focus_dirs: JSON.stringify(w.focus_dirs),
        context_assets: JSON.stringify(w.context_assets),
        prompt_style: w.prompt_style,
        role: w.role,
        mcp_servers: JSON.stringify(w.mcp_servers),
        approvals: JSON.stringify(w.approvals),
        position: pos++,
      })),
    )
    .returning(WORKER_COLUMNS.map((c) => c.replace('workers.', '')) as any)
    .execute();
  return (rows as unknown as ViewRow[])
    .sort((a, b) => a.position - b.position)
    .map((r) => toWorkerView(r, project.name));
}

/** The workers of a project as other areas refer to them (id, label, context skills), by position. */
export function workerRefs(
  ex: Executor,
  projectId: number,
): Promise<Array<{ id: number; label: string; role: string | null; context_assets: string[] }>> {
  return ex
    .selectFrom('workers')
    .select(['id', 'label', 'role', 'context_assets'])
    .where('project_id', '=', projectId)
    .orderBy('position')
    .orderBy('id')
    .execute();
}

/** Columns of a worker row as its own routes read it: the view's, the sealed bot token and the runtime state. */
const WORKER_ROW_COLUMNS = [
  ...WORKER_COLUMNS,
  'workers.messenger_token_enc',
  'workers.status',
  'workers.status_started_at',
  'workers.current_skill',
  'workers.session_seen_at',
] as const;

/** The view columns without the table prefix (for `returning`). */
const VIEW_RETURNING = WORKER_COLUMNS.map((c) => c.replace('workers.', '')) as unknown as readonly (keyof WorkerRow)[];

/** The repository of the workers area (see the module header). Reads filter by project id where they can. */
export function createWorkersRepo(db: Kysely<DB>) {
  return {
    /** Run `fn` in one transaction. */
    transaction: <T>(fn: (tx: Transaction<DB>) => Promise<T>): Promise<T> => db.transaction().execute(fn),

    /** Number of workers of the given projects (the plan limit counts an owner's projects). */
    count: (ex: Executor, projectIds: number[]): Promise<number> => countWorkers(ex, projectIds),

    /** Insert normalized workers at the end of the project's order. @returns their views. */
    insert: (ex: Executor, project: { id: number; name: string }, workers: NormalizedWorker[]) =>
      insertWorkers(ex, project, workers),

    /** A project's workers as other areas refer to them (id, label, role, context skills), by position. */
    refs: (projectId: number, ex: Executor = db) => workerRefs(ex, projectId),

    /** Whether a worker of these projects has a messenger bot bound (the onboarding checklist's "bot" step). */
    async anyBotIn(projectIds: number[]): Promise<boolean> {
      if (!projectIds.length) return false;
      const row = await db
        .selectFrom('workers')
        .select('id')
        .where('project_id', 'in', projectIds)
        .where('messenger_bot_id', 'is not', null)
        .limit(1)
        .executeTakeFirst();
      return !!row;
    },

    /** Number of workers per project of the given ids (projects without workers are absent). */
    async countByProject(projectIds: number[]): Promise<Map<number, number>> {
      if (!projectIds.length) return new Map();
      const rows = await db
        .selectFrom('workers')
        .select(['project_id', sql<number>`count(*)::int`.as('n')])
        .where('project_id', 'in', projectIds)
        .groupBy('project_id')
        .execute();
      return new Map(rows.map((r) => [r.project_id, Number(r.n)]));
    },

    /** A project's workers with the view columns, by position then id. */
    listViews: (projectId: number) =>
      db
        .selectFrom('workers')
        .select(WORKER_COLUMNS)
        .where('workers.project_id', '=', projectId)
        .orderBy('workers.position')
        .orderBy('workers.id')
        .execute(),

    /**
     * Short records of the workers of the given projects (every project's with `null`), ordered by project
     * id, position, id (`GET /workers`).
     */
    async summaries(projectIds: number[] | null) {
      let q = db
        .selectFrom('workers')
        .select(['id', 'project_id', 'label', 'icon', 'type', 'model', 'tools', 'context_assets']);
      if (projectIds) {
        if (!projectIds.length) return [];
        q = q.where('project_id', 'in', projectIds);
      }
      return q.orderBy('project_id').orderBy('position').orderBy('id').execute();
    },

    /** Worker `id` of project `projectId` with its sealed token and runtime state, or undefined. */
    row: (projectId: number, id: number) =>
      db
        .selectFrom('workers')
        .select(WORKER_ROW_COLUMNS)
        .where('workers.project_id', '=', projectId)
        .where('workers.id', '=', id)
        .executeTakeFirst(),

    /** Every column of worker `id` of project `projectId` (an agent run's worker), or undefined. */
    full: (projectId: number, id: number) =>
      db.selectFrom('workers').selectAll().where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst(),

    /** The names of the outside MCP servers worker `id` uses ([] when none or no such worker). */
    async mcpServers(id: number): Promise<string[]> {
      const r = await db.selectFrom('workers').select('mcp_servers').where('id', '=', id).executeTakeFirst();
      return Array.isArray(r?.mcp_servers) ? r.mcp_servers : [];
    },

    /** Id, label and role of worker `id` of the project, or undefined. */
    brief: (projectId: number, id: number) =>
      db
        .selectFrom('workers')
        .select(['id', 'role', 'label'])
        .where('id', '=', id)
        .where('project_id', '=', projectId)
        .executeTakeFirst(),

    /** Id, label and role of the project's first worker (by position, then id), or undefined. */
    first: (projectId: number) =>
      db
        .selectFrom('workers')
        .select(['id', 'role', 'label'])
        .where('project_id', '=', projectId)
        .orderBy('position')
        .orderBy('id')
        .limit(1)
        .executeTakeFirst(),

    /** Id, label and role of those of `ids` that belong to the project (unknown ids are left out). */
    pick: (projectId: number, ids: number[]) =>
      db
        .selectFrom('workers')
        .select(['id', 'label', 'role'])
        .where('project_id', '=', projectId)
        .where('id', 'in', ids)
        .execute(),

    /** Ids of the project's workers (in the database's order). */
    async ids(projectId: number): Promise<number[]> {
      const rows = await db.selectFrom('workers').select('id').where('project_id', '=', projectId).execute();
      return rows.map((r) => r.id);
    },

    /** Ids of the project's workers by position, then id. */
    async orderedIds(ex: Executor, projectId: number): Promise<number[]> {
      const rows = await ex
        .selectFrom('workers')
        .select('id')
        .where('project_id', '=', projectId)
        .orderBy('position')
        .orderBy('id')
        .execute();
      return rows.map((r) => r.id);
    },

    /** Place worker `id` of the project at `position` (0 first). */
    async setPosition(ex: Executor, projectId: number, id: number, position: number): Promise<void> {
      await ex
        .updateTable('workers')
        .set({ position })
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .execute();
    },

    /** Change fields of worker `id` of the project. @returns the view columns of the changed row. */
    async update(projectId: number, id: number, patch: Updateable<DB['workers']>) {
      const row = await db
        .updateTable('workers')
        .set(patch)
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .returning(VIEW_RETURNING)
        .executeTakeFirstOrThrow();
      return row as unknown as ViewRow;
    },

    /** Delete worker `id` of the project (its runs go with it). */
    async remove(projectId: number, id: number): Promise<void> {
      await db.deleteFrom('workers').where('project_id', '=', projectId).where('id', '=', id).execute();
    },

    /** Store the blob key of the worker's icon. */
    async setIcon(id: number, key: string): Promise<void> {
      await db.updateTable('workers').set({ icon_key: key, updated_at: new Date() }).where('id', '=', id).execute();
    },

    /** Store the blob key of the worker's avatar (`avatar_pack` becomes `custom`). */
    async setAvatar(id: number, key: string): Promise<void> {
      await db
        .updateTable('workers')
        .set({ avatar_key: key, avatar_pack: 'custom', updated_at: new Date() })
        .where('id', '=', id)
        .execute();
    },

    /** Forget the worker's avatar (`avatar_pack` back to `role`). */
    async clearAvatar(id: number): Promise<void> {
      await db
        .updateTable('workers')
        .set({ avatar_key: null, avatar_pack: 'role', updated_at: new Date() })
        .where('id', '=', id)
        .execute();
    },

    /** Another worker than `exceptId` holding the messenger bot `botId`, or undefined. */
    botHolder: (botId: string, exceptId: number, ex: Executor = db) =>
      ex
        .selectFrom('workers')
        .select('id')
        .where('messenger_bot_id', '=', botId)
        .where('id', '!=', exceptId)
        .executeTakeFirst(),

    /** Store a sealed bot token with the bot's id and username. Fails with 23505 when the bot is bound elsewhere. */
    async setBot(
      id: number,
      bot: { tokenEnc: string; botId: string; username: string },
      ex: Executor = db,
    ): Promise<void> {
      await ex
        .updateTable('workers')
        .set({
          messenger_token_enc: bot.tokenEnc,
          messenger_bot_id: bot.botId,
          messenger_bot_username: bot.username,
          updated_at: new Date(),
        })
        .where('id', '=', id)
        .execute();
    },

    /**
     * Every worker with a bound messenger bot: `{worker_id, project_id, label, bot_id, bot_username, token_enc}`
     * (the token sealed), for the messenger area's pollers.
     */
    boundBots: () =>
      db
        .selectFrom('workers')
        .select([
          'id as worker_id',
          'project_id',
          'label',
          'messenger_bot_id as bot_id',
          'messenger_bot_username as bot_username',
          'messenger_token_enc as token_enc',
        ])
        .where('messenger_token_enc', 'is not', null)
        .where('messenger_bot_id', 'is not', null)
        .orderBy('id')
        .execute() as Promise<
        Array<{
          worker_id: number;
          project_id: number;
          label: string;
          bot_id: string;
          bot_username: string | null;
          token_enc: string;
        }>
      >,

    /** Remove the worker's bot only while it is still bot `botId` (a revoked token; a rebind meanwhile stays). */
    async clearBotIf(id: number, botId: string): Promise<boolean> {
      const r = await db
        .updateTable('workers')
        .set({
          messenger_token_enc: null,
          messenger_bot_id: null,
          messenger_bot_username: null,
          updated_at: new Date(),
        })
        .where('id', '=', id)
        .where('messenger_bot_id', '=', botId)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },

    /** Remove the worker's bot (token, id and username). */
    async clearBot(id: number): Promise<void> {
      await db
        .updateTable('workers')
        .set({
          messenger_token_enc: null,
          messenger_bot_id: null,
          messenger_bot_username: null,
          updated_at: new Date(),
        })
        .where('id', '=', id)
        .execute();
    },

    /**
     * Worker `id` of project `projectId` is working (an agent run claimed; `status_started_at` kept when it already
     * was). One statement. @returns every column of it (an agent run's worker, as `full`), or undefined when there
     * is no such worker (nothing changed then).
     */
    startWorking: (projectId: number, id: number) =>
      db
        .updateTable('workers')
        .set({
          status: 'working',
          status_started_at: sql`case when status = 'working' and status_started_at is not null then status_started_at else now() end`,
        })
        .where('id', '=', id)
        .where('project_id', '=', projectId)
        .returningAll()
        .executeTakeFirst(),

    /** Set or clear the worker's `current_skill`. */
    async setCurrentSkill(id: number, skill: string | null): Promise<void> {
      await db.updateTable('workers').set({ current_skill: skill }).where('id', '=', id).execute();
    },

    /**
     * Lock the working ones of `ids` (every working worker with `null`) until the transaction ends, so a run
     * claimed meanwhile sets its worker working only after the caller decided. @returns their ids.
     */
    async lockWorking(tx: Transaction<DB>, ids: number[] | null): Promise<number[]> {
      if (ids && !ids.length) return [];
      let q = tx.selectFrom('workers').select('id').where('status', '=', 'working');
      if (ids) q = q.where('id', 'in', ids);
      const rows = await q.orderBy('id').forUpdate().execute();
      return rows.map((r) => r.id);
    },

    /** The working ones of `ids` go idle (`status_started_at` now, no current skill). */
    async setIdle(ex: Executor, ids: number[]): Promise<void> {
      if (!ids.length) return;
      await ex
        .updateTable('workers')
        .set({ status: 'idle', status_started_at: new Date(), current_skill: null })
        .where('id', 'in', ids)
        .where('status', '=', 'working')
        .execute();
    },

    /** The user's templates and the public ones, oldest first. */
    templatesFor: (userId: number) =>
      db
        .selectFrom('worker_templates')
        .selectAll()
        .where((eb) => eb.or([eb('owner_id', '=', userId), eb('is_public', '=', true)]))
        .orderBy('id')
        .execute(),

    /** @returns the new template's id. */
    /** Store a template (`config` as JSON). @returns its id. */
    async insertTemplate(t: {
      ownerId: number;
      name: string;
      description: string;
      config: Record<string, unknown>;
      isPublic: boolean;
    }): Promise<number> {
      const row = await db
        .insertInto('worker_templates')
        .values({
          owner_id: t.ownerId,
          name: t.name,
          description: t.description,
          config: JSON.stringify(t.config),
          is_public: t.isPublic,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    },

    /** The owner of template `id`, or undefined when there is none. */
    templateOwner: (id: number) =>
      db.selectFrom('worker_templates').select('owner_id').where('id', '=', id).executeTakeFirst(),

    /** Delete template `id` when `ownerId` owns it. */
    async deleteTemplate(id: number, ownerId: number): Promise<void> {
      await db.deleteFrom('worker_templates').where('id', '=', id).where('owner_id', '=', ownerId).execute();
    },

    // Personal data (privacy export and erasure, retention).

    /** The export's `workers` of a project (never the sealed bot token). */
    exportProject: (projectId: number) =>
      db
        .selectFrom('workers')
        .select([
          'id',
          'label',
          'icon',
          'type',
          'model',
          'max_turns',
          'tools',
          'system_prompt',
          'focus_dirs',
          'context_assets',
          'prompt_style',
          'avatar_pack',
          'role',
          'position',
          'messenger_bot_username',
          'created_at',
          'updated_at',
        ])
        .where('project_id', '=', projectId)
        .orderBy('position')
        .orderBy('id')
        .execute(),

    /** The export's `worker_templates` of a user. */
    exportTemplates: (userId: number) =>
      db
        .selectFrom('worker_templates')
        .select(['id', 'name', 'description', 'config', 'is_public', 'created_at'])
        .where('owner_id', '=', userId)
        .orderBy('id')
        .execute(),

    /** Erasure: a project's workers. */
    async eraseProject(tx: Transaction<DB>, projectId: number): Promise<void> {
      await tx.deleteFrom('workers').where('project_id', '=', projectId).execute();
    },

    /** Erasure: the user's worker templates. */
    async eraseUser(tx: Transaction<DB>, userId: number): Promise<void> {
      await tx.deleteFrom('worker_templates').where('owner_id', '=', userId).execute();
    },

    /** Which of `ids` are workers that exist (the sweep of images left by erased workers). */
    async existing(ids: number[]): Promise<Set<number>> {
      if (!ids.length) return new Set();
      const rows = await db.selectFrom('workers').select('id').where('id', 'in', ids).execute();
      return new Set(rows.map((r) => r.id));
    },
  };
}

export type WorkersRepo = ReturnType<typeof createWorkersRepo>;
