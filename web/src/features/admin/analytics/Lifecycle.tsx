import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { lifecycleQuery } from '../api';
import { useI18n } from '../../../i18n';
import { ErrorLine, Loading, Select } from '../../../ui';
import { HBarChart } from '../charts/HBarChart';
import { Stat } from '../charts/Stat';
import { useUnits } from '../charts/useUnits';
import { formatSeconds, funnelBars } from '../charts/charts';
import { STEP_LABELS, SEGMENTS } from './labels';
import { WindowSelect } from './WindowSelect';

/** The lifecycle funnel (sign-up to coming back), by segment, with its own window. */
export function Lifecycle() {
  const { t, number } = useI18n();
  const units = useUnits();
  const [days, setDays] = useState(30);
  const [segment, setSegment] = useState('all');
  const q = useQuery(lifecycleQuery(days));
  const seg = segment === 'all' ? null : q.data?.segments[segment];
  const steps = seg ? seg.steps : (q.data?.steps ?? []);
  const a = q.data?.acceptance;
  return (
    <section className="card analytics-block" aria-labelledby="lifecycle-h">
      <h2 id="lifecycle-h">{t('Lifecycle funnel')}</h2>
      <div className="controls">
        <WindowSelect
          label={t('Signed up in')}
          value={days}
          onChange={setDays}
          options={[7, 30, 90, 365]}
          unit="days"
        />
        <Select
          label={t('Segment')}
          value={segment}
          onChange={setSegment}
          options={SEGMENTS.map((s) => ({ value: s.value, label: t(s.label) }))}
        />
      </div>
      <ErrorLine error={q.error} />
      {!q.data && !q.error && <Loading />}
      {q.data && (
        <>
          <p className="muted">
            {t('Cohort: {n} users', { n: number(seg ? seg.cohort : q.data.cohortSize) })}
            {' · '}
            {Object.entries(q.data.segments)
              .map(([k, v]) => `${t(SEGMENTS.find((s) => s.value === k)?.label ?? k)} ${number(v.cohort)}`)
              .join(' · ')}
          </p>
          <HBarChart
            caption={t('Users who reached each step (strict funnel)')}
            labelHeader={t('Step')}
            headers={[t('Users'), t('% of cohort'), t('% of previous'), t('Median time from previous')]}
            rows={funnelBars(steps).map((s) => ({
              key: s.key,
              label: t(STEP_LABELS[s.key] ?? s.key),
              width: s.width,
              cells: [
                number(s.count),
                `${s.pctOfCohort} %`,
                `${s.pctOfPrev} %`,
                formatSeconds(s.medianSecondsFromPrev, units),
              ],
            }))}
          />
          <div className="chart-wrap">
            <table className="table">
              <caption>{t('Steps by segment: users (% of the segment)')}</caption>
              <thead>
                <tr>
                  <th scope="col">{t('Step')}</th>
                  {Object.keys(q.data.segments).map((k) => (
                    <th scope="col" key={k} className="num">
                      {t(SEGMENTS.find((s) => s.value === k)?.label ?? k)}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {q.data.steps.map((step, i) => (
                  <tr key={step.key}>
                    <th scope="row">{t(STEP_LABELS[step.key] ?? step.key)}</th>
                    {Object.entries(q.data.segments).map(([k, v]) => (
                      <td key={k} className="num">
                        {v.steps[i] ? `${number(v.steps[i].count)} (${v.steps[i].pctOfCohort} %)` : '—'}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {a && (
            <div className="stats">
              <Stat
                label={t('Median signup → first response')}
                value={formatSeconds(a.medianSignupToFirstResponseSec, units)}
                hint={t('Target {target}; {n} users', {
                  target: formatSeconds(a.targetSec, units),
                  n: number(a.sampleSize),
                })}
              />
              <Stat
                label={t('Acceptance')}
                value={
                  a.medianSignupToFirstResponseSec == null
                    ? t('No sample yet')
                    : a.medianSignupToFirstResponseSec <= a.targetSec
                      ? t('Met')
                      : t('Not met')
                }
              />
            </div>
          )}
        </>
      )}
    </section>
  );
}
