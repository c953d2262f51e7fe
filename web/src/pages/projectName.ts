import { slugify as translit } from 'transliteration';

/**
 * Letters the transliteration tables spell awkwardly for Ukrainian (ґ as "g'"), and apostrophes inside words
 * ("м'ята"), which would split a word with a dash.
 */
const REPLACE: [string, string][] = [
  ['ґ', 'g'],
  ['Ґ', 'G'],
  ["'", ''],
  ['’', ''],
  ['ʼ', ''],
];

/** The longest technical name the service accepts, and its pattern (lower-case ASCII letters, digits, dashes). */
export const PROJECT_NAME_MAX = 40;
export const PROJECT_NAME_PATTERN = '[a-z0-9](?:[a-z0-9_\\-]{0,38}[a-z0-9])?';

/**
 * A project's technical name from its display name in any script, transliterated to Latin ("Дослідження ринку" →
 * "doslidzhennya-rinku", "北京" → "bei-jing"): lower-case ASCII letters, digits and dashes, 2–40 long; '' when
 * nothing of the name can be spelled so.
 */
export function slugify(display: string): string {
  const s = translit(display, { lowercase: true, separator: '-', replace: REPLACE })
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, PROJECT_NAME_MAX)
    .replace(/-+$/, '');
  return s.length >= 2 ? s : s ? `${s}-project` : '';
}
