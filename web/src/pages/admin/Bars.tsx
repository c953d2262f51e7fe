/**
 * Accessible charts of the admin pages, plain HTML/CSS: a horizontal bar chart is a table (label, bar, figures as
 * text), so screen readers and narrow screens read the numbers; a daily series is a row of columns with the
 * values in a visually hidden table.
 */
import type { ReactNode } from 'react';
import { useI18n } from '../../i18n';
import { labelledDays, type DayBar, type DurationUnits } from './charts';

/** One row of a horizontal bar chart: label, bar width (0–100 %), the figures shown as text. */
export interface HBarRow {
  key: string;
  label: ReactNode;
  width: number;
  cells: ReactNode[];
}

/** A horizontal bar chart as a table: caption, column headers of the figures, one bar per row. */
export function HBarChart({
  caption,
  labelHeader,
  headers,
  rows,
}: {
  caption: string;
  labelHeader: string;
  headers: string[];
  rows: HBarRow[];
}) {
  const { t } = useI18n();
  return (
    <div className="chart-wrap">
      <table className="table hbar">
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">{labelHeader}</th>
            <th scope="col" className="hbar-bar-col">
              <span className="sr-only">{t('Bar')}</span>
            </th>
            {headers.map((h) => (
              <th scope="col" key={h} className="num">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 && (
            <tr>
              <td colSpan={headers.length + 2} className="muted">
                {t('No data in this window.')}
              </td>
            </tr>
          )}
          {rows.map((r) => (
            <tr key={r.key}>
              <th scope="row">{r.label}</th>
              <td className="hbar-bar-col" aria-hidden="true">
                <span className="hbar-bar" style={{ width: `${r.width}%` }} />
              </td>
              {r.cells.map((c, i) => (
                <td key={i} className="num">
                  {c}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A daily series as columns (one per day) with a hidden table of the same figures for assistive technology. */
export function DailyChart({ caption, days, valueLabel }: { caption: string; days: DayBar[]; valueLabel: string }) {
  const { t, number } = useI18n();
  const labelled = labelledDays(days.length);
  return (
    <figure className="daily">
      <figcaption>{caption}</figcaption>
      <div className="daily-cols" aria-hidden="true">
        {days.map((d, i) => (
          <div key={d.date} className="daily-col" title={`${d.date}: ${number(d.value)}`}>
            <span className="daily-val">{d.value && days.length <= 31 ? number(d.value) : ''}</span>
            <span className="daily-bar" style={{ height: `${d.height}%` }} />
            <span className="daily-date">{labelled[i] ? d.date.slice(5) : ''}</span>
          </div>
        ))}
      </div>
      <table className="sr-only">
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">{t('Day')}</th>
            <th scope="col">{valueLabel}</th>
          </tr>
        </thead>
        <tbody>
          {days.map((d) => (
            <tr key={d.date}>
              <th scope="row">{d.date}</th>
              <td>{d.value}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}

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

/** The duration unit labels in the current language, for `formatSeconds` / `formatMs`. */
export function useUnits(): DurationUnits & { ms: string } {
  const { t } = useI18n();
  return { d: t('d'), h: t('h'), min: t('min'), s: t('s'), ms: t('ms') };
}
