/**
 * The gettext catalogs `<localesDir>/<locale>/<domain>.po` (domain `server`: the service's own texts; `web`: the web
 * UI's). Translation feedback patches them: every catalog of a locale that holds a msgid gets the accepted
 * suggestion as its `msgstr`, through gettext-parser (the header, comments, flags and entry order are kept) and an
 * atomic write (lib/atomic-write.ts), so a reader never sees a half-written file.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { atomicWrite } from '../../lib/atomic-write.ts';
import { loadGettext } from '../../lib/gettext.ts';

/** Locales that take translation feedback (docs/ARCHITECTURE.md, Feedback and translation feedback). */
export const FEEDBACK_LOCALES = ['uk', 'de', 'es', 'fr', 'pl', 'pt-BR', 'ru'] as const;

export interface PoCatalogs {
  /**
   * Set the translation of `msgid` (any context; the first plural form) to `msgstr` in every catalog of `locale`.
   * @returns the catalog files patched (relative to the locales directory); empty when no catalog holds the msgid.
   * @throws on a file that cannot be read, parsed or written (nothing of that file is changed).
   */
  patch(locale: string, msgid: string, msgstr: string): Promise<string[]>;
  /** The translation of `msgid` in `<locale>/<domain>.po`, or undefined. */
  lookup(locale: string, domain: string, msgid: string): Promise<string | undefined>;
}

export function createPoCatalogs(localesDir: string): PoCatalogs {
  const dirOf = (locale: string) => {
    if (!(FEEDBACK_LOCALES as readonly string[]).includes(locale) && locale !== 'en')
      throw new Error('unsupported locale');
    return path.join(localesDir, locale);
  };
  return {
    async patch(locale, msgid, msgstr) {
      const dir = dirOf(locale);
      let names: string[];
      try {
        names = (await fs.readdir(dir)).filter((n) => n.endsWith('.po')).sort();
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw err;
      }
      const patched: string[] = [];
      const { po } = await loadGettext();
      for (const name of names) {
        const file = path.join(dir, name);
        const st = await fs.lstat(file);
        if (!st.isFile()) continue;
        const parsed = po.parse(await fs.readFile(file));
        let hit = false;
        for (const entries of Object.values(parsed.translations)) {
          const e = entries[msgid];
          if (msgid && e) {
            e.msgstr = [msgstr, ...e.msgstr.slice(1)];
            if (e.comments?.flag) {
              const flags = e.comments.flag
                .split(',')
                .map((f) => f.trim())
                .filter((f) => f && f !== 'fuzzy');
              e.comments.flag = flags.join(', ');
            }
            hit = true;
          }
        }
        if (!hit) continue;
        await atomicWrite(file, po.compile(parsed));
        patched.push(path.join(locale, name));
      }
      return patched;
    },
    async lookup(locale, domain, msgid) {
      const { po } = await loadGettext();
      try {
        const parsed = po.parse(await fs.readFile(path.join(dirOf(locale), `${domain}.po`)));
        for (const entries of Object.values(parsed.translations)) if (entries[msgid]) return entries[msgid].msgstr[0];
      } catch {
        /* no catalog */
      }
      return undefined;
    },
  };
}
