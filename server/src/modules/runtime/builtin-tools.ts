/**
 * The built-in agent tools: project files inside the worker's `focus_dirs`, issues, skills, wiki and
 * semantic search (the last four through ports, see ports.ts). Registered by `createDefaultToolRegistry`.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { BadRequest, Forbidden } from '../../http/errors.ts';
import { atomicWrite } from '../../lib/atomic-write.ts';
import { locationLabel } from '../../lib/doc-sources.ts';
import { isWithin, normalizeRelative, resolveInside } from '../../lib/paths.ts';
import { createToolRegistry, type AgentTool, type ToolContext, type ToolRegistry } from './tools.ts';

/** Largest file content handed to the model by read_file (characters). */
export const READ_LIMIT = 100_000;
/** Largest content write_file accepts (characters). */
export const WRITE_LIMIT = 1_000_000;
const LIST_LIMIT = 500;
/** A skill loaded by load_skill is cut to this many characters. */
const SKILL_LOAD_LIMIT = 20_000;

/**
 * The directories a worker may touch: each of its `focus_dirs` inside the project directory, or the
 * whole project directory when it has none. Focus dirs that escape the project are dropped.
 */
export function focusRoots(projectDir: string, focusDirs: string[]): string[] {
  const base = path.resolve(projectDir);
  const roots = focusDirs
    .filter((d) => typeof d === 'string' && d.trim() && !path.isAbsolute(d))
    .map((d) => path.resolve(base, d))
    .filter((r) => isWithin(base, r));
  return roots.length ? roots : [base];
}

/**
 * Resolve a path given by the model (relative to the project directory) to an absolute path inside one
 * of the worker's focus roots, following symlinks (lib/paths.ts `resolveInside`, dangling links included).
 * @returns the real path (symbolic links followed).
 * @throws BadRequest `invalid_path` on a non-string or absolute path; Forbidden `outside_focus_dirs` on an
 *   escape by `..`, by a symlink, or outside the focus dirs; Forbidden `symlink_write` when writing through a link.
 */
export async function resolveWorkerPath(
  projectDir: string,
  focusDirs: string[],
  given: unknown,
  opts: { forWrite?: boolean } = {},
): Promise<string> {
  if (typeof given !== 'string' || given.includes('\0'))
    throw new BadRequest('invalid_path', 'The path must be a string.');
  const outsideFocus = () =>
    new Forbidden(`The path ${given} is outside this worker's focus directories.`, 'outside_focus_dirs');
  const rel = normalizeRelative(given.trim(), (problem) =>
    problem === 'absolute'
      ? new BadRequest('invalid_path', 'Use a path relative to the project directory.')
      : outsideFocus(),
  );
  const base = path.resolve(projectDir);
  const abs = rel ? path.join(base, rel) : base;
  const root = focusRoots(base, focusDirs).find((r) => isWithin(r, abs));
  if (!root) throw outsideFocus();
  const { real } = await resolveInside(root, path.relative(root, abs), {
    create: true,
    refuse: () =>
      new Forbidden(`The path ${given} leads outside this worker's focus directories.`, 'outside_focus_dirs'),
  });
  if (opts.forWrite) {
    const st = await fs.lstat(abs).catch(() => null);
    if (st?.isSymbolicLink()) throw new Forbidden('Writing through a symbolic link is not allowed.', 'symlink_write');
  }
  return real;
}

const relOf = (ctx: ToolContext, abs: string) => path.relative(path.resolve(ctx.project.dir), abs) || '.';
const str = (v: unknown) => (typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v));
const num = (v: unknown) => {
  const n = typeof v === 'number' ? v : Number(v);
  if (!Number.isInteger(n) || n < 1) throw new BadRequest('invalid_issue_id', 'issue_id must be a positive integer.');
  return n;
};
const json = (v: unknown) => JSON.stringify(v);

export const fileTools: AgentTool[] = [
  {
    name: 'read_file',
    effect: 'read',
    group: 'files',
    description:
      'Read a text file of the project (path relative to the project directory, inside your focus directories).',
    input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    async run(ctx, input) {
      const abs = await resolveWorkerPath(ctx.project.dir, ctx.worker.focus_dirs, input.path);
      const st = await fs.stat(abs).catch(() => null);
      if (!st?.isFile()) return { content: `No file at ${str(input.path)}.`, is_error: true };
      const text = await fs.readFile(abs, 'utf8');
      const cut =
        text.length > READ_LIMIT
          ? `${text.slice(0, READ_LIMIT)}\n[… cut at ${READ_LIMIT} of ${text.length} characters]`
          : text;
      return { content: cut, data: { path: relOf(ctx, abs), size: st.size } };
    },
  },
  {
    name: 'list_files',
    effect: 'read',
    group: 'files',
    description:
      'List files and folders of a project directory (default: your focus directories). Set recursive to walk sub-folders.',
    input_schema: { type: 'object', properties: { path: { type: 'string' }, recursive: { type: 'boolean' } } },
    async run(ctx, input) {
      const starts = input.path
        ? [await resolveWorkerPath(ctx.project.dir, ctx.worker.focus_dirs, input.path)]
        : focusRoots(ctx.project.dir, ctx.worker.focus_dirs);
      const lines: string[] = [];
      const walk = async (dir: string, depth: number): Promise<void> => {
        const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
        entries.sort((a, b) => a.name.localeCompare(b.name));
        for (const e of entries) {
          if (lines.length >= LIST_LIMIT || e.name === '.git') continue;
          const abs = path.join(dir, e.name);
          if (e.isDirectory()) {
            lines.push(`${relOf(ctx, abs)}/`);
            if (input.recursive && depth < 6) await walk(abs, depth + 1);
          } else if (e.isFile()) {
            const st = await fs.stat(abs).catch(() => null);
            lines.push(`${relOf(ctx, abs)} (${st?.size ?? 0} bytes)`);
          }
        }
      };
      for (const s of starts) await walk(s, 0);
      if (lines.length >= LIST_LIMIT) lines.push(`[… listing cut at ${LIST_LIMIT} entries]`);
      return { content: lines.length ? lines.join('\n') : '(empty)', data: { count: lines.length } };
    },
  },
  {
    name: 'write_file',
    effect: 'idempotent',
    group: 'files',
    description: 'Create or replace a text file of the project (inside your focus directories).',
    input_schema: {
      type: 'object',
      properties: { path: { type: 'string' }, content: { type: 'string' } },
      required: ['path', 'content'],
    },
    async run(ctx, input) {
      const content = str(input.content);
      if (content.length > WRITE_LIMIT)
        return { content: `The content is over ${WRITE_LIMIT} characters.`, is_error: true };
      const abs = await resolveWorkerPath(ctx.project.dir, ctx.worker.focus_dirs, input.path, { forWrite: true });
      // The owner's storage quota and the disk floor (a replaced file frees its old bytes: the growth is charged).
      const old = await fs.stat(abs).catch(() => null);
      await ctx.ports.storage?.reserve(ctx.userId, Math.max(0, Buffer.byteLength(content) - (old?.size ?? 0)));
      await atomicWrite(abs, content);
      return {
        content: `Wrote ${relOf(ctx, abs)} (${Buffer.byteLength(content)} bytes).`,
        data: { path: relOf(ctx, abs), bytes: Buffer.byteLength(content) },
      };
    },
  },
];

const STATUSES = ['open', 'in_progress', 'blocked', 'deferred', 'closed'] as const;

export const issueTools: AgentTool[] = [
  {
    name: 'create_issue',
    effect: 'idempotent', // the same call made again answers the issue it created (`key`)
    group: 'issues',
    needs: 'issues',
    description: 'Create an issue in the project tracker.',
    input_schema: {
      type: 'object',
      properties: {
        title: { type: 'string' },
        priority: { type: 'string', description: 'e.g. P1' },
        description: { type: 'string' },
      },
      required: ['title'],
    },
    async run(ctx, input) {
      const issue = await ctx.ports.issues!.create({
        projectId: ctx.project.id,
        title: str(input.title).slice(0, 300),
        priority: input.priority ? str(input.priority) : undefined,
        description: input.description ? str(input.description) : undefined,
        author: ctx.worker.label,
        key: ctx.callId ? `run:${ctx.runId}:${ctx.callId}` : undefined,
      });
      return { content: json(issue), data: { issue_id: issue.id, title: issue.title, priority: issue.priority } };
    },
  },
  {
    name: 'take_issue',
    group: 'issues',
    needs: 'issues',
    description: 'Take an issue to work on it: it becomes in_progress and assigned to you.',
    input_schema: { type: 'object', properties: { issue_id: { type: 'integer' } }, required: ['issue_id'] },
    async run(ctx, input) {
      const issue = await ctx.ports.issues!.take({
        projectId: ctx.project.id,
        issueId: num(input.issue_id),
        assignee: ctx.worker.label,
      });
      return { content: json(issue), data: { issue_id: issue.id, status: issue.status } };
    },
  },
  {
    name: 'update_issue',
    group: 'issues',
    needs: 'issues',
    description: `Change an issue: status (${STATUSES.join(', ')}), title, priority, description or assignee.`,
    input_schema: {
      type: 'object',
      properties: {
        issue_id: { type: 'integer' },
        status: { type: 'string', enum: [...STATUSES] },
        title: { type: 'string' },
        priority: { type: 'string' },
        description: { type: 'string' },
        assignee: { type: 'string' },
      },
      required: ['issue_id'],
    },
    async run(ctx, input) {
      const status = input.status === undefined ? undefined : str(input.status);
      if (status !== undefined && !(STATUSES as readonly string[]).includes(status))
        return { content: `Unknown status ${status}; use one of ${STATUSES.join(', ')}.`, is_error: true };
      const issue = await ctx.ports.issues!.update({
        projectId: ctx.project.id,
        issueId: num(input.issue_id),
        author: ctx.worker.label,
        ...(status ? { status: status as (typeof STATUSES)[number] } : {}),
        ...(input.title !== undefined ? { title: str(input.title) } : {}),
        ...(input.priority !== undefined ? { priority: str(input.priority) } : {}),
        ...(input.description !== undefined ? { description: str(input.description) } : {}),
        ...(input.assignee !== undefined ? { assignee: input.assignee === null ? null : str(input.assignee) } : {}),
      });
      return { content: json(issue), data: { issue_id: issue.id, status: issue.status } };
    },
  },
  {
    name: 'log_issue',
    group: 'issues',
    needs: 'issues',
    description: 'Add a progress note to an issue’s activity log.',
    input_schema: {
      type: 'object',
      properties: { issue_id: { type: 'integer' }, message: { type: 'string' } },
      required: ['issue_id', 'message'],
    },
    async run(ctx, input) {
      const issueId = num(input.issue_id);
      const message = str(input.message).slice(0, 4000);
      await ctx.ports.issues!.log({ projectId: ctx.project.id, issueId, message, author: ctx.worker.label });
      return { content: 'Logged.', data: { issue_id: issueId } };
    },
  },
];

export const skillTools: AgentTool[] = [
  {
    name: 'load_skill',
    group: 'skills',
    needs: 'skills',
    description: 'Load a skill of the project by name; its instructions are returned to you.',
    input_schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    async run(ctx, input) {
      const skill = await ctx.ports.skills!.get(ctx.project.id, str(input.name));
      if (!skill) return { content: `No skill named ${str(input.name)}.`, is_error: true };
      await ctx.setCurrentSkill(skill.name);
      await ctx.activity('skill_loaded', `Loaded skill ${skill.name}`, null, { skill: skill.name });
      return { content: skill.content.slice(0, SKILL_LOAD_LIMIT), data: { skill: skill.name } };
    },
  },
  {
    name: 'unload_skill',
    group: 'skills',
    needs: 'skills',
    description: 'Unload the skill you loaded when you are done with it.',
    input_schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    async run(ctx, input) {
      await ctx.setCurrentSkill(null);
      await ctx.activity('skill_unloaded', `Unloaded skill ${str(input.name)}`, null, { skill: str(input.name) });
      return { content: 'Unloaded.', data: { skill: str(input.name) } };
    },
  },
];

export const wikiTools: AgentTool[] = [
  {
    name: 'read_wiki_page',
    effect: 'read',
    group: 'wiki',
    needs: 'wiki',
    description: 'Read a page of the project wiki by path (e.g. guides/setup.md).',
    input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    async run(ctx, input) {
      const page = await ctx.ports.wiki!.read(ctx.project.id, str(input.path));
      if (!page) return { content: `No wiki page at ${str(input.path)}.`, is_error: true };
      return { content: page.content.slice(0, READ_LIMIT), data: { path: page.path } };
    },
  },
  {
    name: 'save_wiki_page',
    group: 'wiki',
    needs: 'wiki',
    description: 'Create or replace a page of the project wiki.',
    input_schema: {
      type: 'object',
      properties: { path: { type: 'string' }, content: { type: 'string' } },
      required: ['path', 'content'],
    },
    async run(ctx, input) {
      const saved = await ctx.ports.wiki!.save(
        ctx.project.id,
        str(input.path),
        str(input.content).slice(0, WRITE_LIMIT),
        ctx.worker.label,
      );
      return { content: `Saved ${saved.path}.`, data: { path: saved.path } };
    },
  },
];

export const searchTools: AgentTool[] = [
  {
    name: 'search_knowledge',
    effect: 'read',
    group: 'search',
    needs: 'search',
    description: 'Search the project knowledge (wiki, issues, skills, transcripts) by meaning.',
    input_schema: {
      type: 'object',
      properties: { query: { type: 'string' }, k: { type: 'integer', minimum: 1, maximum: 25 } },
      required: ['query'],
    },
    async run(ctx, input) {
      const k = Math.min(25, Math.max(1, Number(input.k) || 6));
      const hits = await ctx.ports.search!.search(ctx.project.id, str(input.query), k);
      return {
        content: hits.length
          ? hits
              .map((h, i) => {
                const where = locationLabel(h.location);
                return `${i + 1}. [${h.doc_type} ${h.doc_id}${where ? ` ${where}` : ''}] ${h.text.slice(0, 1000)}`;
              })
              .join('\n\n')
          : 'No results.',
        data: { hits: hits.length },
      };
    },
  },
];

/** Longest command and time limit of `run_command`. */
const COMMAND_LIMIT = 8000;
const COMMAND_TIMEOUT_MS = 120_000;

export const shellTools: AgentTool[] = [
  {
    name: 'run_command',
    group: 'shell',
    needs: 'shell',
    description:
      "Run a shell command inside the project owner's cloud container (its home directory) and get its output. Only available when the owner has a cloud container.",
    input_schema: {
      type: 'object',
      properties: { command: { type: 'string', description: 'run with sh -c; 2 minutes at most' } },
      required: ['command'],
    },
    async run(ctx, input) {
      const command = str(input.command);
      if (command.length > COMMAND_LIMIT)
        return { content: `The command is longer than ${COMMAND_LIMIT} characters.`, is_error: true };
      const res = await ctx.ports.shell!.run(ctx.userId, command, { timeoutMs: COMMAND_TIMEOUT_MS });
      if (!res)
        return {
          content: 'There is no cloud container: commands run only inside the owner’s container, never elsewhere.',
          is_error: true,
        };
      const tail = res.output.slice(-20_000);
      return {
        content: res.timedOut
          ? `Stopped after ${COMMAND_TIMEOUT_MS / 1000} s.\n${tail}`
          : `Exit code ${res.code}.\n${tail}`,
        is_error: res.code !== 0,
        data: { exit_code: res.code, timed_out: res.timedOut },
      };
    },
  },
];

/** A registry holding every built-in tool. */
export function createDefaultToolRegistry(): ToolRegistry {
  const reg = createToolRegistry();
  for (const t of [...fileTools, ...issueTools, ...skillTools, ...wikiTools, ...searchTools, ...shellTools])
    reg.register(t);
  return reg;
}
