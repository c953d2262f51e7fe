import { useQuery } from '@tanstack/react-query';
import { wipeQuery } from '../api';
import { useI18n } from '../../../i18n';
import { ErrorLine, Loading } from '../../../ui';
import { DailyChart } from '../charts/DailyChart';
import { HBarChart } from '../charts/HBarChart';
import { Stat } from '../charts/Stat';
import { useUnits } from '../charts/useUnits';
import { barWidths, dailySeries, formatMs } from '../charts/charts';

/** Wipe metrics over `days`. */
export function Wipe({ days }: { days: number }) {
  const { t, number } = useI18n();
  const units = useUnits();
  const q = useQuery(wipeQuery(days));
  const w = q.data;
  const workerWidths = barWidths(w?.by_worker.map((b) => b.render_count) ?? []);
  return (
    <section className="card analytics-block" aria-labelledby="wipe-h">
      <h2 id="wipe-h">{t('Wipe metrics')}</h2>
      <ErrorLine error={q.error} />
      {!w && !q.error && <Loading />}
      {w && (
        <>
          <div className="stats">
            <Stat
              label={t('Renders')}
              value={number(w.render.count)}
              hint={t('median {p50}, p95 {p95}, max {max}', {
                p50: formatMs(w.render.p50_ms, units),
                p95: formatMs(w.render.p95_ms, units),
                max: formatMs(w.render.max_ms, units),
              })}
            />
            <Stat
              label={t('Interactions')}
              value={number(w.interaction.count)}
              hint={t('{avg} per session on average; {zero} sessions without any', {
                avg: w.interaction.avg_per_session.toFixed(1),
                zero: number(w.interaction.sessions_zero),
              })}
            />
          </div>
          <DailyChart
            caption={t('Renders per day')}
            valueLabel={t('Renders')}
            days={dailySeries(w.daily, (r) => r.renders, days)}
          />
          <HBarChart
            caption={t('By worker')}
            labelHeader={t('Worker')}
            headers={[t('Renders'), t('Average render'), t('Sessions'), t('Interactions per session')]}
            rows={w.by_worker.map((b, i) => ({
              key: String(b.worker_id),
              label: b.worker_id == null ? t('none') : `#${b.worker_id}`,
              width: workerWidths[i],
              cells: [
                number(b.render_count),
                formatMs(b.avg_render_ms, units),
                number(b.session_count),
                b.avg_interactions.toFixed(1),
              ],
            }))}
          />
        </>
      )}
    </section>
  );
}
