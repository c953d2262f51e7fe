/**
 * Test-only fixtures (imported by *.test.ts files, never by the app).
 * Factories for worker-runtime tests: workers, skills, an LLM key, and waiting on runs.
 */
import { api, type TestApp } from './helpers.ts';

export async function createWorker(
  t: TestApp,
  projectId: number,
  fields: Partial<{
    label: string;
    model: string | null;
    max_turns: number;
    tools: string[];
    system_prompt: string;
    focus_dirs: string[];
    context_assets: string[];
    role: string | null;
  }> = {},
): Promise<{ id: number; label: string }> {
  const label = fields.label ?? `worker-${Math.random().toString(36).slice(2, 7)}`;
  const row = await t.db
    .insertInto('workers')
    .values({
      project_id: projectId,
      label,
      model: fields.model ?? 'claude-sonnet-4-6',
      max_turns: fields.max_turns ?? 20,
      tools: JSON.stringify(fields.tools ?? []),
      system_prompt: fields.system_prompt ?? '',
      focus_dirs: JSON.stringify(fields.focus_dirs ?? []),
      context_assets: JSON.stringify(fields.context_assets ?? []),
      role: fields.role ?? null,
      icon: null,
      prompt_style: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: row.id, label };
}

/** Give a user their own LLM key (account settings). */
export async function giveKey(t: TestApp, userId: number, key = 'sk-user-test-key') {
  await t.db
    .insertInto('account_settings')
    .values({ user_id: userId, llm_key_enc: t.deps.sealer.seal(key) })
    .execute();
}

/** Poll a run until it ends. */
export async function waitRun(t: TestApp, project: string, runId: number, token: string, ms = 20_000) {
  const end = Date.now() + ms;
  for (;;) {
    const r = await api(t.app, 'GET', `/api/crm/projects/${project}/runs/${runId}`, { token });
    if (r.status !== 200) throw new Error(`run ${runId}: ${r.status} ${r.text}`);
    if (!['queued', 'running'].includes(r.body.status)) return r.body;
    if (Date.now() > end) throw new Error(`run ${runId} still ${r.body.status}`);
    await new Promise((res) => setTimeout(res, 40));
  }
}

export async function waitFor<T>(fn: () => Promise<T | undefined | null | false>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((res) => setTimeout(res, 40));
  }
}

/** A skill of a project (or global with `projectId` null), written as the skills area stores it. */
export async function createSkill(
  t: TestApp,
  projectId: number | null,
  skill: { name: string; description: string; content: string },
): Promise<number> {
  const row = await t.db
    .insertInto('skills')
    .values({ owner_project: projectId, name: skill.name, description: skill.description, content: skill.content })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}
