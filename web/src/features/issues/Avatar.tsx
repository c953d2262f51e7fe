import { hue, initials } from './board';

/** A round avatar with the initials of `name` on a colour of its own (no image, no emoji font); empty when none. */
export function Avatar({ name, size = 'sm' }: { name: string | null | undefined; size?: 'sm' | 'md' }) {
  if (!name) return <span className={`avatar ${size} none`} aria-hidden="true" />;
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
