/**
 * The messages the web UI's sources mark for translation: the first string argument of every `t('…')` and
 * `msg('…')` call in `.ts`/`.tsx` files (tests and generated files excluded), in order of appearance, once each.
 * Used by the catalogs test and `scripts/web-catalogs.ts` (Node only; not part of the bundle).
 */
import fs from 'node:fs';
import path from 'node:path';

const CALL = /(?<![\w.])(?:t|msg)\(\s*'((?:[^'\\]|\\.)*)'/g;

export function extractMessages(dir: string): string[] {
  const ids: string[] = [];
  const files = fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter(
      (f) =>
        /\.tsx?$/.test(f) && !/\.test\.tsx?$/.test(f) && !f.endsWith('.gen.d.ts') && !f.endsWith('i18n-extract.ts'),
    )
    .sort();
  for (const f of files) {
    const text = fs.readFileSync(path.join(dir, f), 'utf8');
    for (const m of text.matchAll(CALL)) {
      const id = m[1].replace(/\\'/g, "'");
      if (id && !ids.includes(id)) ids.push(id);
    }
  }
  return ids;
}
