/**
 * The context a run starts with (docs/ARCHITECTURE.md, Issues, skills, wiki, files, pins, learnings):
 * the worker's system prompt, then the project's rules (`protocol`), then the project manifest cut to
 * 8000 characters, then the index of the skills the worker may use (the project's own and the platform's, never
 * another user's published skill: skills.port.ts), bounded in entries and characters, then each skill named in
 * `context_assets` auto-loaded and cut to 3000 characters (through the skills port). The manifest is the first of
 * `MANIFEST.md`, `manifest.md`, `README.md` found at the root of the project directory.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { SkillsPort } from './ports.ts';
import { focusRoots } from './builtin-tools.ts';

export const MANIFEST_LIMIT = 8000;
export const AUTOLOAD_SKILL_LIMIT = 3000;
const MANIFEST_FILES = ['MANIFEST.md', 'manifest.md', 'README.md'];
/** Most skills the prompt's skill index lists. */
export const SKILL_INDEX_MAX = 40;
/** Characters of one skill's description in the index (whitespace collapsed to one line). */
export const SKILL_INDEX_DESCRIPTION = 200;
/** Characters of the whole `# Skills` section. */
export const SKILL_INDEX_LIMIT = 4000;

/**
 * The prompt's `# Skills` section: one line `- name: description` per skill in the given order (descriptions on
 * one line, cut to 200 characters), at most 40 lines and 4000 characters; when skills are left out, a last line
 * says how many. @returns null for no skills.
 */
export function skillIndex(list: Array<{ name: string; description: string }>): string | null {
  if (!list.length) return null;
  const head = '# Skills';
  const lines: string[] = [];
  let size = head.length;
  for (const s of list) {
    if (lines.length >= SKILL_INDEX_MAX) break;
    const description = s.description.replace(/\s+/g, ' ').trim().slice(0, SKILL_INDEX_DESCRIPTION);
    const line = `- ${s.name}: ${description}`;
    // Keep room for the closing line.
    if (size + 1 + line.length > SKILL_INDEX_LIMIT - 60) break;
    lines.push(line);
    size += 1 + line.length;
  }
  const left = list.length - lines.length;
  if (left > 0) lines.push(`- (${left} more skill${left === 1 ? '' : 's'} not listed)`);
  return [head, ...lines].join('\n');
}

async function readManifest(dir: string): Promise<string | null> {
  for (const f of MANIFEST_FILES) {
    const text = await fs.readFile(path.join(dir, f), 'utf8').catch(() => null);
    if (text !== null) return text;
  }
  return null;
}

/** A worker's context without the runtime's workspace section: what a run and the CLI's `arc init` share. */
export interface WorkerContext {
  /**
   * System prompt, `# Project rules`, `# Project manifest`, `# Skills`, then one `## Skill: <name>` per auto-loaded
   * skill.
   */
  parts: string[];
  /** The skills the worker may use (the project's own, then the platform's), names and descriptions. */
  skills: Array<{ name: string; description: string }>;
  /** The auto-loaded skills (`context_assets`), each cut to 3000 characters. */
  autoloaded: Array<{ name: string; content: string }>;
}

/**
 * Assemble a worker's context: the system prompt, the project rules, the manifest (≤ 8000 characters) after
 * the rules and before the skills list, then each `context_assets` skill (≤ 3000 characters each).
 */
export async function buildWorkerContext(input: {
  project: { id: number; display_name: string; dir: string; protocol: string };
  worker: { label: string; system_prompt: string; context_assets: string[] };
  skills?: SkillsPort;
}): Promise<WorkerContext> {
  const { project, worker } = input;
  const parts: string[] = [
    worker.system_prompt.trim() || `You are ${worker.label}, an AI worker of the project ${project.display_name}.`,
  ];
  if (project.protocol.trim()) parts.push(`# Project rules\n${project.protocol.trim()}`);
  const manifest = await readManifest(project.dir);
  if (manifest?.trim()) parts.push(`# Project manifest\n${manifest.slice(0, MANIFEST_LIMIT)}`);
  const autoloaded: WorkerContext['autoloaded'] = [];
  let list: WorkerContext['skills'] = [];
  if (input.skills) {
    list = await input.skills.list(project.id);
    const index = skillIndex(list);
    if (index) parts.push(index);
    for (const name of worker.context_assets) {
      const skill = await input.skills.get(project.id, name);
      if (!skill) continue;
      const content = skill.content.slice(0, AUTOLOAD_SKILL_LIMIT);
      autoloaded.push({ name: skill.name, content });
      parts.push(`## Skill: ${skill.name}\n${content}`);
    }
  }
  return { parts, skills: list, autoloaded };
}

/**
 * Assemble the system text of a run: the worker's context (`buildWorkerContext`) and the workspace section.
 * @returns the system text and the names of the auto-loaded skills.
 */
export async function buildSystem(input: {
  project: { id: number; display_name: string; dir: string; protocol: string };
  worker: { label: string; system_prompt: string; context_assets: string[]; focus_dirs: string[] };
  skills?: SkillsPort;
  toolNames: string[];
}): Promise<{ system: string; autoloaded: string[] }> {
  const { project, worker } = input;
  const ctx = await buildWorkerContext(input);
  const parts = ctx.parts;
  const autoloaded = ctx.autoloaded.map((s) => s.name);
  const roots = focusRoots(project.dir, worker.focus_dirs).map(
    (r) => path.relative(path.resolve(project.dir), r) || '.',
  );
  parts.push(
    `# Workspace\nYou act on the project ${project.display_name} only. File paths are relative to the project directory; you may touch: ${roots.join(', ')}.` +
      (input.toolNames.length ? ` Tools: ${input.toolNames.join(', ')}.` : ' You have no tools in this conversation.') +
      ' You cannot run shell commands.',
  );
  return { system: parts.join('\n\n'), autoloaded };
}
