/**
 * English and Ukrainian from the gettext catalogs `locales/<locale>/web.po`, loaded at run time from the
 * service (`GET /api/crm/i18n/web/:locale`), so an accepted translation shows without a rebuild. Messages are
 * written in English (the msgid); `t` fills `{placeholders}`; `tn` picks a plural form (the catalog's
 * `msgid_plural` forms, chosen by the locale's plural rule). Dates and numbers use the chosen locale's formats.
 */
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { api } from './api/client';

export const LOCALES = [
  { code: 'en', label: 'English' },
  { code: 'uk', label: 'Українська' },
] as const;
export type Locale = (typeof LOCALES)[number]['code'];
const KEY = 'crm.locale';

/** Marks a message for the catalogs where it is written (tables of labels); `t()` translates it where shown. */
export const msg = (msgid: string): string => msgid;

/** Fill `{name}` placeholders of a message from `vars`; unknown placeholders stay as written. */
export function interpolate(message: string, vars?: Record<string, string | number>): string {
  if (!vars) return message;
  return message.replace(/\{(\w+)\}/g, (all, name: string) => (name in vars ? String(vars[name]) : all));
}

/**
 * The index of the plural form for `n` in a catalog of `locale` (gettext's order: English one, other; Ukrainian
 * one, few, many), from the locale's plural rule (Intl.PluralRules).
 */
export function pluralIndex(locale: string, n: number): number {
  const category = new Intl.PluralRules(locale).select(n);
  if (locale === 'uk') return category === 'one' ? 0 : category === 'few' ? 1 : 2;
  return category === 'one' ? 0 : 1;
}

/** The locale to start with: the saved choice, else the browser's language when it is Ukrainian, else English. */
export function initialLocale(saved: string | null, languages: readonly string[]): Locale {
  if (saved === 'en' || saved === 'uk') return saved;
  return languages.some((l) => l.toLowerCase().startsWith('uk')) ? 'uk' : 'en';
}

interface I18n {
  locale: Locale;
  setLocale(locale: Locale): void;
  t(msgid: string, vars?: Record<string, string | number>): string;
  /**
   * A message with plural forms: `one` and `other` are the English forms (the msgid and msgid_plural), `n` picks
   * the form and fills `{n}` (formatted for the locale) besides `vars`.
   */
  tn(one: string, other: string, n: number, vars?: Record<string, string | number>): string;
  date(value: string | Date | null | undefined): string;
  number(value: number): string;
  /** The loaded catalog: msgid → translation (empty for English). */
  messages: Record<string, string>;
}

const Ctx = createContext<I18n | null>(null);

export function I18nProvider({ children }: { children: ReactNode }) {
  const [locale, setLocaleState] = useState<Locale>(() =>
    initialLocale(
      typeof localStorage === 'undefined' ? null : localStorage.getItem(KEY),
      typeof navigator === 'undefined' ? [] : navigator.languages,
    ),
  );
  const [messages, setMessages] = useState<Record<string, string>>({});
  const [plurals, setPlurals] = useState<Record<string, string[]>>({});
  useEffect(() => {
    let live = true;
    document.documentElement.lang = locale;
    api.GET('/api/crm/i18n/web/{locale}', { params: { path: { locale } } }).then(({ data }) => {
      if (live) {
        setMessages(data?.messages ?? {});
        setPlurals(data?.plurals ?? {});
      }
    });
    return () => {
      live = false;
    };
  }, [locale]);
  const setLocale = useCallback((l: Locale) => {
    localStorage.setItem(KEY, l);
    setLocaleState(l);
  }, []);
  const value = useMemo<I18n>(() => {
    const tag = locale === 'uk' ? 'uk-UA' : 'en-GB';
    const dateFmt = new Intl.DateTimeFormat(tag, { dateStyle: 'medium', timeStyle: 'short' });
    const numFmt = new Intl.NumberFormat(tag);
    return {
      locale,
      setLocale,
      t: (msgid, vars) => interpolate(messages[msgid] || msgid, vars),
      tn: (one, other, n, vars) => {
        const forms = plurals[one] ?? [one, other];
        const lang = plurals[one] ? locale : 'en';
        return interpolate(forms[pluralIndex(lang, n)] ?? other, { ...vars, n: numFmt.format(n) });
      },
      date: (v) => (v ? dateFmt.format(typeof v === 'string' ? new Date(v) : v) : '—'),
      number: (n) => numFmt.format(n),
      messages,
    };
  }, [locale, messages, plurals, setLocale]);
  return <Ctx.Provider value={value}>{children}</Ctx.Provider>;
}

/** The current locale's helpers: `t`, `date`, `number`, `locale`, `setLocale`. */
export function useI18n(): I18n {
  const v = useContext(Ctx);
  if (!v) throw new Error('useI18n outside I18nProvider');
  return v;
}
