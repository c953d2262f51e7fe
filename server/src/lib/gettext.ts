/**
 * gettext-parser (the `.po` catalogs of the web UI and of translation feedback), imported at first use: with its
 * character-set tables (encoding, iconv-lite) it cost ~25–80 ms and ~10–16 MiB RSS of every start, for catalogs a
 * process may never read (bench/README.md, "Start-up").
 */
let gettext: Promise<typeof import('gettext-parser')> | undefined;

/** The gettext-parser module, imported once. @returns its exports (`po.parse`, `po.compile`, …). */
export const loadGettext = (): Promise<typeof import('gettext-parser')> => (gettext ??= import('gettext-parser'));
