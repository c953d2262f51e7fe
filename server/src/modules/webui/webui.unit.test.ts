import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createWebUiService } from './webui.service.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'locales-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const po = (entries: [string, string][]) =>
  `msgid ""\nmsgstr "Content-Type: text/plain; charset=utf-8\\n"\n\n` +
  entries.map(([id, str]) => `msgid "${id}"\nmsgstr "${str}"\n`).join('\n');

describe('web catalogs', () => {
  const svc = createWebUiService({ distDir: dir, localesDir: dir });

  it('reads a changed catalog again (an accepted suggestion shows without a restart), untranslated left out', async () => {
    fs.mkdirSync(path.join(dir, 'uk'));
    const file = path.join(dir, 'uk', 'web.po');
    fs.writeFileSync(
      file,
      po([
        ['Save', 'Зберегти'],
        ['Open', ''],
      ]),
    );
    expect((await svc.catalog('uk')).messages).toEqual({ Save: 'Зберегти' });
    fs.writeFileSync(
      file,
      po([
        ['Save', 'Зберегти'],
        ['Open', 'Відкриті'],
      ]),
    );
    const later = new Date(Date.now() + 5000);
    fs.utimesSync(file, later, later);
    expect((await svc.catalog('uk')).messages).toEqual({ Save: 'Зберегти', Open: 'Відкриті' });
  });

  it('an unknown locale is 404; a catalog that does not parse is 502, never a crash', async () => {
    await expect(svc.catalog('fr')).rejects.toThrow(
      expect.objectContaining({ statusCode: 404, code: 'locale_not_found' }),
    );
    fs.mkdirSync(path.join(dir, 'de'));
    fs.writeFileSync(path.join(dir, 'de', 'web.po'), 'garbage here');
    await expect(svc.catalog('de')).rejects.toThrow(expect.objectContaining({ statusCode: 502 }));
  });
});
