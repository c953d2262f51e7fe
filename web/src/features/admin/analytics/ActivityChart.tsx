import { useQuery } from '@tanstack/react-query';
import { activityQuery } from '../api';
import { useI18n } from '../../../i18n';
import { ErrorLine, Loading } from '../../../ui';
import { DailyChart } from '../charts/DailyChart';
import { HBarChart } from '../charts/HBarChart';
import { countBars, dailySeries } from '../charts/charts';

/** Activity per day over the window. */
export function Activity({ days }: { days: number }) {
  const { t, number } = useI18n();
  const q = useQuery(activityQuery(days));
  return (
    <section className="card analytics-block" aria-labelledby="activity-h">
      <h2 id="activity-h">{t('Activity')}</h2>
      <ErrorLine error={q.error} />
      {!q.data && !q.error && <Loading />}
      {q.data && (
        <>
          <DailyChart
            caption={t('Events per day')}
            valueLabel={t('Events')}
            days={dailySeries(q.data.daily, (r) => r.events, days)}
          />
          <DailyChart
            caption={t('Active users per day')}
            valueLabel={t('Users')}
            days={dailySeries(q.data.daily, (r) => r.active_users, days)}
          />
          <HBarChart
            caption={t('Events by type')}
            labelHeader={t('Event')}
            headers={[t('Events')]}
            rows={countBars(Object.fromEntries(q.data.byType.map((b) => [b.type, b.n]))).map((b) => ({
              key: b.label,
              label: <code>{b.label}</code>,
              width: b.width,
              cells: [number(b.value)],
            }))}
          />
        </>
      )}
    </section>
  );
}
