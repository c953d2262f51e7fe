/**
 * `npx tsx scripts/web-catalogs.ts`: bring the web UI's gettext catalogs (`locales/<locale>/web.po`) up to date
 * with the messages the sources mark (`t('…')`, `msg('…')` in web/src): new msgids are added (English: msgstr
 * empty, the msgid is shown; other locales: empty until translated), translations already there are kept,
 * msgids no longer used are dropped. Plural messages (`tn('one', 'other', n)`) get their `msgid_plural` and as
 * many forms as the locale's plural rule has (`Plural-Forms`: English 2, Ukrainian 3). The web catalogs test fails
 * when a catalog is behind the sources.
 */
import fs from 'node:fs';
import path from 'node:path';
import { po as gettextPo } from 'gettext-parser';
import { extractMessages, extractPlurals } from '../web/src/i18n-extract.ts';

const root = path.resolve(import.meta.dirname, '..');
const ids = extractMessages(path.join(root, 'web/src'));
const plurals = extractPlurals(path.join(root, 'web/src'));
/** The gettext plural rule of each locale (the order of its forms; the web UI picks one with Intl.PluralRules). */
const PLURAL_FORMS: Record<string, [number, string]> = {
  en: [2, 'nplurals=2; plural=(n != 1);'],
  uk: [3, 'nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);'],
};
for (const locale of ['en', 'uk']) {
  const [nplurals, rule] = PLURAL_FORMS[locale]!;
  const file = path.join(root, 'locales', locale, 'web.po');
  const old = fs.existsSync(file) ? gettextPo.parse(fs.readFileSync(file)).translations[''] : {};
  const translations: Record<string, { msgid: string; msgid_plural?: string; msgstr: string[] }> = {};
  for (const id of ids) {
    const plural = plurals[id];
    translations[id] = plural
      ? {
          msgid: id,
          msgid_plural: plural,
          msgstr: Array.from({ length: nplurals }, (_, i) => (old[id]?.msgid_plural ? old[id]?.msgstr?.[i] : '') ?? ''),
        }
      : { msgid: id, msgstr: [old[id]?.msgstr?.[0] ?? ''] };
  }
  const po = gettextPo.compile(
    {
      charset: 'utf-8',
      headers: { 'Content-Type': 'text/plain; charset=UTF-8', Language: locale, 'Plural-Forms': rule },
      translations: { '': translations },
    } as any,
    {
      foldLength: 0,
    },
  );
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, po);
  console.log(`${file}: ${ids.length} messages`);
}
