import { useEffect, useState } from 'react';

type Translit = typeof import('transliteration').slugify;

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
 * A project's technical name from its display name in any script, transliterated to Latin by `translit` (the
 * `transliteration` package: "Дослідження ринку" → "doslidzhennya-rinku", "北京" → "bei-jing"): lower-case ASCII
 * letters, digits and dashes, 2–40 long; '' when nothing of the name can be spelled so.
 */
export function makeSlugify(translit: Translit): (display: string) => string {
  return (display) => {
    const s = translit(display, { lowercase: true, separator: '-', replace: REPLACE })
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, PROJECT_NAME_MAX)
      .replace(/-+$/, '');
    return s.length >= 2 ? s : s ? `${s}-project` : '';
  };
}

/** `makeSlugify` over the transliteration tables, loaded on first use (they weigh ~180 kB, so not up front). */
export const loadSlugify = () => import('transliteration').then((m) => makeSlugify(m.slugify));

/** The slugify function once its tables are loaded (null until then); loads them when `wanted`. */
export function useSlugify(wanted = true): ((display: string) => string) | null {
  const [fn, setFn] = useState<((display: string) => string) | null>(null);
  useEffect(() => {
    let live = true;
    if (wanted && !fn) void loadSlugify().then((f) => live && setFn(() => f));
    return () => {
      live = false;
    };
  }, [wanted, fn]);
  return fn;
}
