/** A project's technical name from its display name: lower-case ASCII letters, digits and dashes, 2–40 long. */
export function slugify(display: string): string {
  const s = display
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  return s.length >= 2 ? s : s ? `${s}-project` : '';
}
