/**
 * `npx tsx scripts/web-catalogs.ts`: bring the web UI's gettext catalogs (`locales/<locale>/web.po`) up to date
 * with the messages the sources mark (`t('…')`, `msg('…')` in web/src): new msgids are added (English: msgstr
 * empty, the msgid is shown; other locales: empty until translated), translations already there are kept,
 * msgids no longer used are dropped. The web catalogs test fails when a catalog is behind the sources.
 */
import fs from 'node:fs';
import path from 'node:path';
import { po as gettextPo } from 'gettext-parser';
import { extractMessages } from '../web/src/i18n-extract.ts';

const root = path.resolve(import.meta.dirname, '..');
const ids = extractMessages(path.join(root, 'web/src'));
for (const locale of ['en', 'uk']) {
  const file = path.join(root, 'locales', locale, 'web.po');
  const old = fs.existsSync(file) ? gettextPo.parse(fs.readFileSync(file)).translations[''] : {};
  const translations: Record<string, { msgid: string; msgstr: string[] }> = {};
  for (const id of ids) translations[id] = { msgid: id, msgstr: [old[id]?.msgstr?.[0] ?? ''] };
  const po = gettextPo.compile(
    {
      charset: 'utf-8',
      headers: { 'Content-Type': 'text/plain; charset=UTF-8', Language: locale },
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
