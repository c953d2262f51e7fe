import type { ReactNode } from 'react';

/** A labelled figure of a summary card: `label` above, `value` large. */
export function Stat({ label, value, hint }: { label: string; value: ReactNode; hint?: ReactNode }) {
  return (
    <div className="stat">
      <div className="stat-label">{label}</div>
      <div className="stat-value">{value}</div>
      {hint && <div className="muted stat-hint">{hint}</div>}
    </div>
  );
}
