import { useI18n } from '../../../i18n';
import { labelledDays, type DayBar } from './charts';

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
