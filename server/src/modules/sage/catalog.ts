/**
 * The skill catalog the service ships: Markdown skills with YAML front matter under `catalog/skills/*.md` of the
 * checkout (`name` slug, `description`, `category`, optional `tags` and sample `tasks`). Read once at start;
 * a file that breaks the rules is skipped with a warning, never served half-read.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { checkoutRoot } from '../docs/docs.service.ts';

/** `<checkout>/catalog/skills`. */
export const DEFAULT_CATALOG_DIR = path.join(
  checkoutRoot(path.dirname(fileURLToPath(import.meta.url))),
  'catalog/skills',
);

export const SKILL_NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;
/** Files over this size are not catalog skills (bytes). */
const MAX_FILE_BYTES = 64 * 1024;

export interface CatalogSkill {
  /** `catalog:<name>`. */
  id: string;
  name: string;
  description: string;
  category: string;
  tags: string[];
  /** Sample tasks for benchmarks. */
  tasks: string[];
  /** The Markdown body after the front matter. */
  content: string;
}

export interface Catalog {
  skills: CatalogSkill[];
  /** sha256 over every skill's text: changes when the catalog does. */
  hash: string;
}

const strings = (v: unknown, max: number, len: number): string[] =>
  Array.isArray(v)
    ? v
        .filter((x): x is string => typeof x === 'string' && !!x.trim())
        .map((x) => x.trim().slice(0, len))
        .slice(0, max)
    : [];

/**
 * Parse one catalog file's text.
 * @returns the skill, or a reason it is refused (no front matter, bad YAML, missing or malformed fields).
 */
export function parseCatalogSkill(text: string): CatalogSkill | { error: string } {
  const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/.exec(text);
  if (!m) return { error: 'no front matter' };
  let meta: unknown;
  try {
    meta = parseYaml(m[1], { maxAliasCount: 10 });
  } catch {
    return { error: 'front matter is not valid YAML' };
  }
  if (!meta || typeof meta !== 'object' || Array.isArray(meta)) return { error: 'front matter is not a mapping' };
  const f = meta as Record<string, unknown>;
  if (typeof f.name !== 'string' || !SKILL_NAME.test(f.name)) return { error: 'name must be a slug' };
  if (typeof f.description !== 'string' || !f.description.trim()) return { error: 'description is required' };
  if (typeof f.category !== 'string' || !SKILL_NAME.test(f.category)) return { error: 'category must be a slug' };
  const content = m[2].trim();
  if (!content) return { error: 'the skill has no body' };
  return {
    id: `catalog:${f.name}`,
    name: f.name,
    description: f.description.trim().slice(0, 500),
    category: f.category,
    tags: strings(f.tags, 30, 60).map((t) => t.toLowerCase()),
    tasks: strings(f.tasks, 10, 2000),
    content,
  };
}

/**
 * Read every `*.md` of `dir` (sorted by name; symlinks and files over 64 KB skipped; duplicate names: the first
 * kept). A missing folder is an empty catalog.
 */
export function loadCatalog(dir: string, log?: { warn(o: object, m: string): void }): Catalog {
  let names: string[];
  try {
    names = fs
      .readdirSync(dir)
      .filter((n) => n.endsWith('.md'))
      .sort();
  } catch {
    return { skills: [], hash: crypto.createHash('sha256').digest('hex') };
  }
  const skills: CatalogSkill[] = [];
  const hash = crypto.createHash('sha256');
  for (const n of names) {
    const file = path.join(dir, n);
    const st = fs.lstatSync(file);
    if (!st.isFile() || st.size > MAX_FILE_BYTES) {
      log?.warn({ file: n }, 'catalog skill skipped: not a regular file or too large');
      continue;
    }
    const text = fs.readFileSync(file, 'utf8');
    const s = parseCatalogSkill(text);
    if ('error' in s) {
      log?.warn({ file: n, reason: s.error }, 'catalog skill skipped');
      continue;
    }
    if (skills.some((k) => k.name === s.name)) continue;
    skills.push(s);
    hash.update(text);
  }
  return { skills, hash: hash.digest('hex') };
}

/** How the semantic index reads a catalog skill (title, text with the tags, global scope). */
export function catalogDocument(s: CatalogSkill) {
  return {
    title: s.name,
    text: `# ${s.name}\n\n${s.description}\n\nCategory: ${s.category}. Tags: ${s.tags.join(', ')}.\n\n${s.content}`,
    scope: 'global' as const,
  };
}

/** The semantic index's loader of `catalog_skill` documents: the skill of that name, or null. */
export const catalogLoader = (catalog: Catalog) => async (_projectId: number | null, docId: string) => {
  const s = catalog.skills.find((k) => k.name === docId);
  return s ? catalogDocument(s) : null;
};
