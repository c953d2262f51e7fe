/** The msgid whose translation (or, untranslated, whose msgid) is the selected text; '' when none matches. */
export function msgidForText(messages: Record<string, string>, text: string): string {
  const s = text.trim();
  if (!s) return '';
  for (const [id, str] of Object.entries(messages)) if (str === s) return id;
  return Object.prototype.hasOwnProperty.call(messages, s) ? s : '';
}

/** The project name of a project page's path (`/projects/<name>/…`), or null elsewhere. */
export function projectOfPath(pathname: string): string | null {
  const m = /^\/projects\/([^/]+)/.exec(pathname);
  return m ? decodeURIComponent(m[1]) : null;
}
