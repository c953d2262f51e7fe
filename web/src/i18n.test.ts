import fs from 'node:fs';
import path from 'node:path';
import { po as gettextPo } from 'gettext-parser';
import { describe, expect, it } from 'vitest';
import { extractMessages, extractPlurals } from './i18n-extract';
import { initialLocale, interpolate, pluralIndex } from './i18n';

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
      const forms = entry.msgid_plural ? entry.msgstr : [entry.msgstr[0]];
      for (const form of forms) {
        expect(form, id).not.toBe('');
        expect(placeholders(form), id).toEqual(placeholders(entry.msgid_plural ?? id));
      }
    }
  });

  it('plural messages carry their plural and as many forms as the locale’s rule (en 2, uk 3)', () => {
    const plurals = extractPlurals(path.join(root, 'web/src'));
    expect(Object.keys(plurals).length).toBeGreaterThan(5);
    for (const [locale, n] of [
      ['en', 2],
      ['uk', 3],
    ] as const) {
      const c = catalog(locale);
      for (const [id, plural] of Object.entries(plurals)) {
        expect(c[id]?.msgid_plural, `${locale} ${id}`).toBe(plural);
        expect(c[id]?.msgstr, `${locale} ${id}`).toHaveLength(n);
      }
    }
  });

  it('picks the plural form by the locale’s rule', () => {
    expect([1, 2, 5, 0].map((n) => pluralIndex('en', n))).toEqual([0, 1, 1, 1]);
    expect([1, 21, 2, 3, 24, 5, 11, 12, 14, 25, 0, 111].map((n) => pluralIndex('uk', n))).toEqual([
      0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2,
    ]);
  });
});
