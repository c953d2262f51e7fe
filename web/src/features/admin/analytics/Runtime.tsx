import { useQuery } from '@tanstack/react-query';
import { cascadeQuery, latencyQuery } from '../api';
import { useI18n } from '../../../i18n';
import { ErrorLine, Loading } from '../../../ui';
import { HBarChart } from '../charts/HBarChart';
import { Stat } from '../charts/Stat';
import { useUnits } from '../charts/useUnits';
import { barWidths, countBars, formatMs, pct } from '../charts/charts';
import { STAGES } from './labels';

/** Response latency by stage and the model cascade over `days`. */
export function Runtime({ days }: { days: number }) {
  const { t, tn, number } = useI18n();
  const units = useUnits();
  const lat = useQuery(latencyQuery(days));
  const cas = useQuery(cascadeQuery(days));
  const stages = lat.data ? STAGES.map(([k, label]) => ({ k, label, s: lat.data.stages[k] })) : [];
  const widths = barWidths(stages.map((s) => s.s.p90 ?? 0));
  const byModel = cas.data?.byModel ?? [];
  const modelWidths = barWidths(byModel.map((m) => m.total_tokens));
  return (
    <>
      <section className="card analytics-block" aria-labelledby="latency-h">
        <h2 id="latency-h">{t('Response latency')}</h2>
        <ErrorLine error={lat.error} />
        {!lat.data && !lat.error && <Loading />}
        {lat.data && (
          <>
            <p className="muted">{tn('{n} agent run', '{n} agent runs', lat.data.sampleSize)}</p>
            <HBarChart
              caption={t('Time per stage of an agent run (bars: p90)')}
              labelHeader={t('Stage')}
              headers={[t('Median'), t('p90'), t('Runs')]}
              rows={stages.map((s, i) => ({
                key: s.k,
                label: t(s.label),
                width: widths[i],
                cells: [formatMs(s.s.p50, units), formatMs(s.s.p90, units), number(s.s.n)],
              }))}
            />
          </>
        )}
      </section>
      <section className="card analytics-block" aria-labelledby="cascade-h">
        <h2 id="cascade-h">{t('Model cascade')}</h2>
        <ErrorLine error={cas.error} />
        {!cas.data && !cas.error && <Loading />}
        {cas.data && (
          <>
            <div className="stats">
              <Stat label={t('Runs started on a cheaper model')} value={number(cas.data.applied)} />
              <Stat
                label={t('Escalated')}
                value={number(cas.data.escalated)}
                hint={`${pct(cas.data.escalated, cas.data.applied)} %`}
              />
            </div>
            <HBarChart
              caption={t('Escalations by reason')}
              labelHeader={t('Reason')}
              headers={[t('Runs')]}
              rows={countBars(cas.data.escalationReasons).map((b) => ({
                key: b.label,
                label: <code>{b.label}</code>,
                width: b.width,
                cells: [number(b.value)],
              }))}
            />
            <HBarChart
              caption={t('Model calls of worker runs and their tokens, by model')}
              labelHeader={t('Model')}
              headers={[t('Calls'), t('Tokens')]}
              rows={byModel.map((m, i) => ({
                key: m.model,
                label: <code>{m.model}</code>,
                width: modelWidths[i],
                cells: [number(m.turns), number(m.total_tokens)],
              }))}
            />
          </>
        )}
      </section>
    </>
  );
}
