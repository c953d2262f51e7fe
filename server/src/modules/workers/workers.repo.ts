/**
 * Worker rows: input normalization (presets, defaults), inserts and the public view. Used by the
 * workers service and by project creation (create-with-team, onboarding setup). Every read filters by
 * project id, which the caller got from `access.project`.
 */
import { type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { BadRequest } from '../../http/errors.ts';
import { presetById, resolveModel } from './presets.ts';
import { MODEL_TIERS } from '../runtime/model-tiers.ts';

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
}

export type WorkerRow = Selectable<DB['workers']>;

export interface WorkerView {
  id: number;
  label: string;
  icon: string | null;
  type: 'terminal' | 'messenger';
  model: string | null;
  max_turns: number;
  tools: string[];
  system_prompt: string;
  focus_dirs: string[];
  context_assets: string[];
  prompt_style: string | null;
  avatar_pack: string;
  role: string | null;
  position: number;
  has_avatar: boolean;
  has_icon: boolean;
  bot_username: string | null;
  project_name: string;
  created_at: Date;
  updated_at: Date;
}

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
export async function countWorkers(ex: Kysely<DB> | Transaction<DB>, projectIds: number[]): Promise<number> {
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
 * Defaults: type terminal, max_turns 20 (specification, Worker), model the fallback tier's model.
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
  };
}
export type NormalizedWorker = ReturnType<typeof normalizeWorker>;

/** Insert normalized workers at the end of the project's order. @returns the inserted rows' views. */
export async function insertWorkers(
  tx: Transaction<DB> | Kysely<DB>,
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
  ex: Kysely<DB> | Transaction<DB>,
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
