import fs from 'node:fs';
import path from 'node:path';
import { po as gettextPo } from 'gettext-parser';
import { describe, expect, it } from 'vitest';
import { extractMessages } from './i18n-extract';
import { initialLocale, interpolate } from './i18n';

const root = path.resolve(import.meta.dirname, '../..');
const catalog = (locale: string) =>
  gettextPo.parse(fs.readFileSync(path.join(root, 'locales', locale, 'web.po'))).translations[''];
const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('messages', () => {
  it('interpolate fills known placeholders and leaves unknown ones as written', () => {
    expect(interpolate('{done} of {total} done', { done: 2, total: 5 })).toBe('2 of 5 done');
    expect(interpolate('Hello {name} {other}', { name: 'Ann' })).toBe('Hello Ann {other}');
    expect(interpolate('no vars')).toBe('no vars');
  });

  it('the first locale: the saved choice, else Ukrainian for a Ukrainian browser, else English', () => {
    expect(initialLocale('uk', ['en-US'])).toBe('uk');
    expect(initialLocale(null, ['uk-UA', 'en'])).toBe('uk');
    expect(initialLocale(null, ['de-DE'])).toBe('en');
    expect(initialLocale('fr', ['en'])).toBe('en');
  });

  it('both catalogs hold every message the sources mark, and nothing else', () => {
    const ids = extractMessages(path.join(root, 'web/src'));
    expect(ids.length).toBeGreaterThan(100);
    for (const locale of ['en', 'uk']) {
      const have = Object.keys(catalog(locale)).filter(Boolean);
      expect(have.sort(), `locales/${locale}/web.po (run npx tsx scripts/web-catalogs.ts)`).toEqual([...ids].sort());
    }
  });

  it('every Ukrainian message is translated and keeps the placeholders of its msgid', () => {
    for (const [id, entry] of Object.entries(catalog('uk'))) {
      if (!id) continue;
      expect(entry.msgstr[0], id).not.toBe('');
      expect(placeholders(entry.msgstr[0]), id).toEqual(placeholders(id));
    }
  });
});
