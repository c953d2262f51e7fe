/**
 * The messages the web UI's sources mark for translation: the first string argument of every `t('…')`,
 * `msg('…')` and `tn('…', '…', n)` call in `.ts`/`.tsx` files (tests and generated files excluded), in order of
 * appearance, once each; `tn`'s second argument is the plural (msgid_plural).
 * Used by the catalogs test and `scripts/web-catalogs.ts` (Node only; not part of the bundle).
 */
import fs from 'node:fs';
import path from 'node:path';

const CALL = /(?<![\w.])(?:t|msg|tn)\(\s*'((?:[^'\\]|\\.)*)'/g;
const PLURAL = /(?<![\w.])tn\(\s*'((?:[^'\\]|\\.)*)'\s*,\s*'((?:[^'\\]|\\.)*)'/g;

const sources = (dir: string) =>
  fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter(
      (f) =>
        /\.tsx?$/.test(f) && !/\.test\.tsx?$/.test(f) && !f.endsWith('.gen.d.ts') && !f.endsWith('i18n-extract.ts'),
    )
    .sort();

/** The plural messages (`tn('one', 'other', n)`): msgid → msgid_plural. */
export function extractPlurals(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of sources(dir)) {
    const text = fs.readFileSync(path.join(dir, f), 'utf8');
    for (const m of text.matchAll(PLURAL)) out[m[1].replace(/\\'/g, "'")] = m[2].replace(/\\'/g, "'");
  }
  return out;
}

export function extractMessages(dir: string): string[] {
  const ids: string[] = [];
  for (const f of sources(dir)) {
    const text = fs.readFileSync(path.join(dir, f), 'utf8');
    for (const m of text.matchAll(CALL)) {
      const id = m[1].replace(/\\'/g, "'");
      if (id && !ids.includes(id)) ids.push(id);
    }
  }
  return ids;
}
