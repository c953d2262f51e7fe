/**
 * Accessible charts of the admin pages, plain HTML/CSS (one per file: HBarChart, DailyChart, Stat): a horizontal
 * bar chart is a table (label, bar, figures as text), so screen readers and narrow screens read the numbers; a
 * daily series is a row of columns with the values in a visually hidden table.
 */
import type { ReactNode } from 'react';
import { useI18n } from '../../../i18n';

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
