import { hue, initials } from './board';

/**
 * A round avatar with the initials of `name` on a colour of its own (no image, no emoji font); for no one, an empty
 * outline (`empty`) or nothing.
 */
export function Avatar({
  name,
  size = 'sm',
  empty = false,
}: {
  name: string | null | undefined;
  size?: 'sm' | 'md';
  empty?: boolean;
}) {
  if (!name) return empty ? <span className={`avatar ${size} none`} aria-hidden="true" /> : null;
  return (
    <span
      className={`avatar ${size}`}
      style={{ background: `hsl(${hue(name)} 45% 38%)` }}
      title={name}
      aria-hidden="true"
    >
      {initials(name)}
    </span>
  );
}
