/**
 * The web UI served by the service itself: the built single-page app (`web/dist`, made by `web/build.js`) and
 * its translation catalogs, gettext `.po` files at `<locales>/<locale>/web.po`, read at run time so an
 * accepted translation shows without a rebuild.
 */
import fs from 'node:fs';
import path from 'node:path';
import { NotFound, Upstream } from '../../http/errors.ts';
import { CHECKOUT_ROOT } from '../../lib/checkout.ts';
import { loadGettext } from '../../lib/gettext.ts';

/** `<repo>/web/dist`: where `web/build.js` writes the built app. */
export const DEFAULT_WEB_DIST = path.join(CHECKOUT_ROOT, 'web', 'dist');
/** `<repo>/locales`: gettext catalogs, `<locale>/<domain>.po`. */
export const DEFAULT_LOCALES_DIR = path.join(CHECKOUT_ROOT, 'locales');

/** Locales the web UI ships catalogs for; a locale code is two lower-case letters. */
export const WEB_LOCALES = ['en', 'uk'] as const;

export interface WebCatalog {
  locale: string;
  /** msgid → msgstr; untranslated entries (empty msgstr) are left out, so the UI shows the msgid. */
  messages: Record<string, string>;
  /**
   * Plural entries (`msgid_plural`): msgid → the locale's forms in its plural rule's order (English: one, other;
   * Ukrainian: one, few, many); left out until every form is translated.
   */
  plurals: Record<string, string[]>;
}

/**
 * @param deps.distDir the built app's folder (holds `index.html` and `assets/`)
 * @param deps.localesDir the catalogs' folder (`<locale>/web.po`)
 */
export function createWebUiService(deps: { distDir: string; localesDir: string }) {
  const cache = new Map<string, { mtimeMs: number; size: number; catalog: WebCatalog }>();
  return {
    /** The built app's folder. */
    distDir: deps.distDir,

    /** True when `index.html` exists in the built app's folder. */
    built(): boolean {
      return fs.existsSync(path.join(deps.distDir, 'index.html'));
    },

    /**
     * The web UI's catalog of a locale, parsed from `<localesDir>/<locale>/web.po` (re-read when the file
     * changed: size or mtime). Rejects with 404 `locale_not_found` when there is no such catalog, 502
     * `catalog_unreadable` when the file does not parse.
     */
    async catalog(locale: string): Promise<WebCatalog> {
      const file = path.join(deps.localesDir, locale, 'web.po');
      const st = fs.statSync(file, { throwIfNoEntry: false });
      if (!/^[a-z]{2}$/.test(locale) || !st?.isFile())
        throw new NotFound('There is no web catalog for this locale.', 'locale_not_found');
      const hit = cache.get(locale);
      if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size) return hit.catalog;
      const { po } = await loadGettext();
      let parsed: ReturnType<typeof po.parse>;
      try {
        parsed = po.parse(fs.readFileSync(file));
      } catch {
        throw new Upstream(502, 'catalog_unreadable', 'The catalog of this locale cannot be read.');
      }
      const messages: Record<string, string> = {};
      const plurals: Record<string, string[]> = {};
      for (const context of Object.values(parsed.translations))
        for (const [id, entry] of Object.entries(context)) {
          const forms = entry.msgstr ?? [];
          if (id && entry.msgid_plural) {
            if (forms.length && forms.every(Boolean)) plurals[id] = forms;
          } else if (id && forms[0]) messages[id] = forms[0];
        }
      const catalog = { locale, messages, plurals };
      cache.set(locale, { mtimeMs: st.mtimeMs, size: st.size, catalog });
      return catalog;
    },
  };
}

export type WebUiService = ReturnType<typeof createWebUiService>;
