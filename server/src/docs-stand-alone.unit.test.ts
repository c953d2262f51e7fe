/**
 * The source stands alone: no comment or text under server/src, cli or web/src cites a document that is not in
 * the repository (the word for an outside requirements document, or a path beside the repository such as the
 * shared folder and its two files). A citation names the repository's own docs (docs/api.md,
 * docs/configuration.md, docs/ARCHITECTURE.md, docs/operations.md) and their sections.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const FOLDERS = ['server/src', 'cli', 'web/src'];
const SKIP = new Set(['node_modules', 'dist']);
const TEXT = /\.(ts|tsx|js|mjs|cjs|json|md|sh|css|html)$/;

// Spelled in pieces, so that this file does not find itself.
const OUTSIDE: Array<[string, RegExp]> = [
  ['an outside requirements document', new RegExp(['speci', 'fication'].join(''), 'i')],
  ['the shared folder beside the repository', new RegExp(['\\.\\.', 'shared'].join('/'))],
  ['a file of the shared folder', new RegExp(`\\b(${['CONT', 'RACT'].join('')}|${['DES', 'IGN'].join('')})\\.md\\b`)],
];

/** Every text file under `dir` (relative to the repository). */
function files(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    if (SKIP.has(e.name) || e.name.startsWith('.')) continue;
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...files(rel));
    else if (TEXT.test(e.name)) out.push(rel);
  }
  return out;
}

/** `file:line: what` for each line of `text` that cites something outside the repository. */
export function outsideCitations(file: string, text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, i) => {
    for (const [what, re] of OUTSIDE) if (re.test(line)) found.push(`${file}:${i + 1}: ${what}: ${line.trim()}`);
  });
  return found;
}

describe('the source stands alone', () => {
  it('finds an outside citation when there is one', () => {
    const word = ['speci', 'fication'].join('');
    expect(outsideCitations('a.ts', `/** Rules (${word}, Limits). */`)).toHaveLength(1);
    expect(
      outsideCitations('a.ts', `// see ${['..', 'shared', `${['CONT', 'RACT'].join('')}.md`].join('/')}`),
    ).toHaveLength(2);
    expect(outsideCitations('a.ts', `// ${['DES', 'IGN'].join('')}.md, Seams`)).toHaveLength(1);
    expect(outsideCitations('a.ts', '/** Rules (docs/api.md, Errors). */')).toEqual([]);
  });

  it('no file under server/src, cli or web/src cites a document outside the repository', () => {
    const all = FOLDERS.flatMap(files);
    expect(all.length).toBeGreaterThan(300);
    const found = all.flatMap((f) => outsideCitations(f, fs.readFileSync(path.join(ROOT, f), 'utf8')));
    expect(found).toEqual([]);
  });
});
