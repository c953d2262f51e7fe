/**
 * A generated avatar: the initials of a name on a colour chosen by a hash of the name (the same name always gets
 * the same colour), drawn with CSS, so no image or emoji font is needed. Decorative: the name is shown beside it.
 * The colour is dark enough for white initials on every hue (contrast at least 4.5:1).
 */

/** Up to two initials of `name` (first letters of its first two words; any script). */
export function initials(name: string): string {
  const words = name
    .trim()
    .split(/[\s_\-.]+/u)
    .filter(Boolean);
  const letters = words.slice(0, 2).map((w) => Array.from(w)[0] ?? '');
  return (letters.join('') || '?').toUpperCase();
}

/** A hue (0–359) from a string hash (FNV-1a). */
export function hue(name: string): number {
  let h = 0x811c9dc5;
  for (const ch of name) {
    h ^= ch.codePointAt(0)!;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % 360;
}

export function Avatar({ name, size = 28 }: { name: string; size?: number }) {
  return (
    <span
      className="gen-avatar"
      aria-hidden="true"
      style={{ width: size, height: size, fontSize: size * 0.42, background: `hsl(${hue(name)} 55% 30%)` }}
    >
      {initials(name)}
    </span>
  );
}
