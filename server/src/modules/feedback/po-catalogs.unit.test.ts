import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createPoCatalogs } from './po-catalogs.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'po-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const PO = `# Translator comment kept
msgid ""
msgstr ""
"Language: de\\n"
"Content-Type: text/plain; charset=UTF-8\\n"

#. first
msgid "Zeta"
msgstr "Z alt"

#. second
#, fuzzy, c-format
msgid "Alpha %s"
msgstr "A alt %s"

msgid "Mid"
msgstr ""
`;

describe('gettext catalogs', () => {
  it('patches the msgstr, keeps comments, flags (minus fuzzy) and entry order, in every catalog of the locale', async () => {
    fs.mkdirSync(path.join(dir, 'de'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'de', 'server.po'), PO);
    fs.writeFileSync(path.join(dir, 'de', 'web.po'), PO.replace('Zeta', 'Other'));
    const c = createPoCatalogs(dir);
    expect(await c.patch('de', 'Alpha %s', 'A neu %s')).toEqual(['de/server.po', 'de/web.po']);
    const text = fs.readFileSync(path.join(dir, 'de', 'server.po'), 'utf8');
    expect(text).toContain('# Translator comment kept');
    expect(text).toContain('#. second');
    expect(text).toMatch(/#, c-format\nmsgid "Alpha %s"\nmsgstr "A neu %s"/);
    expect(text).not.toContain('fuzzy');
    expect(text.indexOf('Zeta')).toBeLessThan(text.indexOf('Alpha'));
    expect(text.indexOf('Alpha')).toBeLessThan(text.indexOf('"Mid"'));
    expect(await c.lookup('de', 'server', 'Zeta')).toBe('Z alt');
    expect(await c.patch('de', 'Zeta', 'Z neu')).toEqual(['de/server.po']);
    expect(await c.patch('de', 'missing', 'x')).toEqual([]);
    expect(await c.patch('fr', 'Zeta', 'x')).toEqual([]);
    await expect(c.patch('../etc', 'Zeta', 'x')).rejects.toThrow();
  });
});
