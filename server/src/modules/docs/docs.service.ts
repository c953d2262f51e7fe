/**
 * Public documentation (docs/ARCHITECTURE.md, Shared semantic index, help assistant, public docs): the Markdown user
 * guide under `docs/help/<lang>/` (lang `en` or `uk`), served without authentication, with fallback to the other
 * language when a page exists only there, and a keyword search used by the help assistant.
 *
 * Paths are relative to the language folder, e.g. `getting-started.md` or `guides/cli.md`: segments of
 * letters, digits, `_` and `-`, ending in `.md` (added when missing). Anything else is 400 `invalid_path`;
 * a path resolving outside the docs folder (symlinks included) is 403 `forbidden_path`; a missing page 404.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BadRequest, Forbidden, NotFound } from '../../http/errors.ts';
import type { DocLoader } from '../../lib/doc-sources.ts';
import { resolveInsideSync } from '../../lib/paths.ts';

export const LANGS = ['en', 'uk'] as const;
export type Lang = (typeof LANGS)[number];

/**
 * The folder of the checkout holding this code: the nearest one above it with a package.json (the sources run
 * from `server/src/...`, `npm start` from one bundle under `node_modules/.cache`).
 */
export function checkoutRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return from;
  }
}

/** The docs folder of this checkout: `<repo>/docs/help`. */
export const DEFAULT_DOCS_ROOT = path.join(checkoutRoot(path.dirname(fileURLToPath(import.meta.url))), 'docs/help');

const SEGMENT = /^[A-Za-z0-9_-]+$/;
/** Pages listed first in the tree, in this order; the rest follow alphabetically. */
const FIRST = ['getting-started.md', 'projects-and-workers.md'];

export interface TreeNode {
  path: string;
  title: string;
  /** The language the page is served in (differs from the requested one when only the other exists). */
  lang: Lang;
  children?: TreeNode[];
}

export interface DocSection {
  /** `<lang>/<path>` */
  source: string;
  heading: string;
  text: string;
}

const outsideDocs = () => new Forbidden('This path is outside the documentation.', 'forbidden_path');
const titleOf = (content: string, fallback: string) => /^#\s+(.+)$/m.exec(content)?.[1].trim() ?? fallback;

export function createDocsService(opts: { root?: string } = {}) {
  const root = opts.root ?? DEFAULT_DOCS_ROOT;

  /** Relative `.md` paths under one language folder. */
  const listLang = (lang: Lang): string[] => {
    const base = path.join(root, lang);
    if (!fs.existsSync(base)) return [];
    const out: string[] = [];
    const walk = (dir: string, rel: string) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        if (!SEGMENT.test(e.name.replace(/\.md$/, ''))) continue;
        const r = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) walk(path.join(dir, e.name), r);
        else if (e.isFile() && e.name.endsWith('.md')) out.push(r);
      }
    };
    walk(base, '');
    return out;
  };

  const validate = (p: string): string => {
    let rel = p.trim().replace(/^\/+/, '');
    if (!rel.endsWith('.md')) rel += '.md';
    const segs = rel.slice(0, -3).split('/');
    if (rel.length > 300 || segs.some((s) => !SEGMENT.test(s)))
      throw new BadRequest('invalid_path', 'The path must be a page of the documentation, e.g. getting-started.md.');
    return rel;
  };

  /**
   * Read a validated page in one language (lib/paths.ts `resolveInsideSync`: symlinks followed, dangling ones
   * included). @returns the text, or null when absent. @throws Forbidden `forbidden_path` when it leads outside
   * the docs folder.
   */
  const read = (lang: Lang, rel: string): string | null => {
    let real: string;
    try {
      real = resolveInsideSync(root, `${lang}/${rel}`, { refuse: outsideDocs }).real;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    if (!fs.existsSync(real) || !fs.statSync(real).isFile()) return null;
    return fs.readFileSync(real, 'utf8');
  };

  const sortPaths = (a: string, b: string) => {
    const ia = FIRST.indexOf(a);
    const ib = FIRST.indexOf(b);
    if (ia >= 0 || ib >= 0) return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib);
    return a.localeCompare(b);
  };

  const service = {
    root,
    /**
     * `GET /docs/tree`: every page in `lang`, plus pages that exist only in the other language (served in it).
     * @returns `{lang, tree:[{path, title, lang, children?}]}`; folders are nodes with `children`.
     */
    tree(lang: Lang = 'en'): { lang: Lang; tree: TreeNode[] } {
      const other: Lang = lang === 'en' ? 'uk' : 'en';
      const own = listLang(lang);
      const paths = [...new Set([...own, ...listLang(other)])].sort(sortPaths);
      const top: TreeNode[] = [];
      const folders = new Map<string, TreeNode>();
      for (const p of paths) {
        const served: Lang = own.includes(p) ? lang : other;
        const node: TreeNode = { path: p, title: titleOf(read(served, p) ?? '', p), lang: served };
        const dir = p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '';
        if (!dir) top.push(node);
        else {
          let f = folders.get(dir);
          if (!f) {
            f = { path: dir, title: dir.split('/').pop()!, lang, children: [] };
            folders.set(dir, f);
            top.push(f);
          }
          f.children!.push(node);
        }
      }
      return { lang, tree: top };
    },

    /**
     * `GET /docs/file`: one page in `lang`, or in the other language when it exists only there.
     * @returns `{path, lang, requested_lang, fallback, title, content}`.
     * @throws 400 `invalid_path`, 403 `forbidden_path`, 404 `doc_not_found`.
     */
    file(p: string, lang: Lang = 'en') {
      const rel = validate(p);
      const other: Lang = lang === 'en' ? 'uk' : 'en';
      let served = lang;
      let content = read(lang, rel);
      if (content === null) {
        served = other;
        content = read(other, rel);
      }
      if (content === null) throw new NotFound(`No documentation page '${rel}'.`, 'doc_not_found');
      return {
        path: rel,
        lang: served,
        requested_lang: lang,
        fallback: served !== lang,
        title: titleOf(content, rel),
        content,
      };
    },

    /** Every page as `<lang>/<path>` (for indexing). */
    allPages(): string[] {
      return LANGS.flatMap((l) => listLang(l).map((p) => `${l}/${p}`));
    },

    /** The index loader of global `doc` documents; doc_id `<lang>/<path>`. */
    loader(): DocLoader {
      return async (_projectId, docId) => {
        const m = /^(en|uk)\/(.+)$/.exec(docId);
        if (!m) return null;
        try {
          const content = read(m[1] as Lang, validate(m[2]));
          return content === null ? null : { title: titleOf(content, m[2]), text: content, scope: 'global' };
        } catch {
          return null;
        }
      };
    },

    /** Sections (split at headings) of every page in `lang`, for keyword search. */
    sections(lang: Lang): DocSection[] {
      const out: DocSection[] = [];
      for (const p of listLang(lang)) {
        const content = read(lang, p) ?? '';
        const title = titleOf(content, p);
        let heading = title;
        let buf: string[] = [];
        const flush = () => {
          const text = buf.join('\n').trim();
          if (text) out.push({ source: `${lang}/${p}`, heading, text });
          buf = [];
        };
        for (const line of content.split('\n')) {
          const h = /^#{1,6}\s+(.+)$/.exec(line);
          if (h) {
            flush();
            heading = h[1].trim() === title ? title : `${title} › ${h[1].trim()}`;
          } else buf.push(line);
        }
        flush();
      }
      return out;
    },
  };
  return service;
}

export type DocsService = ReturnType<typeof createDocsService>;
