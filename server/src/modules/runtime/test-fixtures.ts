/**
 * Test-only fixtures (imported by *.test.ts files, never by the app).
 * Factories for worker-runtime tests: workers, an LLM key, in-memory ports (the real issues/skills/wiki
 * modules register theirs in the app; tests inject these through `t.deps.agentPorts`), and waiting on runs.
 */
import { NotFound } from '../../http/errors.ts';
import type { IssueSummary, IssuesPort, SkillsPort, WikiPort } from './ports.ts';
import { api, type TestApp } from '../../../test/helpers.ts';

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

/** An issues port over a Map. */
export function memoryIssues() {
  const issues = new Map<
    number,
    IssueSummary & { projectId: number; description?: string; log: Array<{ message: string; author: string }> }
  >();
  let seq = 0;
  const get = (projectId: number, id: number) => {
    const i = issues.get(id);
    if (!i || i.projectId !== projectId) throw new NotFound(`Issue ${id} was not found.`, 'issue_not_found');
    return i;
  };
  const view = (i: IssueSummary): IssueSummary => ({
    id: i.id,
    title: i.title,
    status: i.status,
    assignee: i.assignee,
    priority: i.priority,
  });
  const port: IssuesPort = {
    async create(p) {
      const i = {
        id: ++seq,
        projectId: p.projectId,
        title: p.title,
        status: 'open' as const,
        assignee: null,
        priority: p.priority ?? null,
        description: p.description,
        log: [],
      };
      issues.set(i.id, i);
      return view(i);
    },
    async take(p) {
      const i = get(p.projectId, p.issueId);
      i.status = 'in_progress';
      i.assignee = p.assignee;
      i.log.push({ message: 'taken', author: p.assignee });
      return view(i);
    },
    async update(p) {
      const i = get(p.projectId, p.issueId);
      if (p.status) i.status = p.status;
      if (p.title) i.title = p.title;
      if (p.assignee !== undefined) i.assignee = p.assignee;
      return view(i);
    },
    async log(p) {
      get(p.projectId, p.issueId).log.push({ message: p.message, author: p.author });
      return { ok: true };
    },
  };
  return { issues, port };
}

export function memorySkills(skills: Record<string, string>): SkillsPort {
  return {
    async list() {
      return Object.keys(skills).map((name) => ({ name, description: `about ${name}` }));
    },
    async get(_p, name) {
      return name in skills ? { name, content: skills[name] } : null;
    },
  };
}

export function memoryWiki(): WikiPort & { pages: Map<string, string> } {
  const pages = new Map<string, string>();
  return {
    pages,
    async read(projectId, path) {
      const c = pages.get(`${projectId}:${path}`);
      return c === undefined ? null : { path, content: c };
    },
    async save(projectId, path, content) {
      pages.set(`${projectId}:${path}`, content);
      return { path };
    },
  };
}
