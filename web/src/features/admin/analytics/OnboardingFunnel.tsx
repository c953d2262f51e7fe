import { useQuery } from '@tanstack/react-query';
import { onboardingFunnelQuery, wizardQuery } from '../api';
import { useI18n } from '../../../i18n';
import { ErrorLine, Loading } from '../../../ui';
import { HBarChart } from '../charts/HBarChart';
import { Stat } from '../charts/Stat';
import { useUnits } from '../charts/useUnits';
import { countBars, formatMs, pct, ratioPct } from '../charts/charts';
import { STEP_LABELS } from './labels';

/** The onboarding funnel and the setup wizard's metrics over `hours`. */
export function Onboarding({ hours }: { hours: number }) {
  const { t, tn, number } = useI18n();
  const units = useUnits();
  const q = useQuery(onboardingFunnelQuery(hours));
  const w = useQuery(wizardQuery(hours));
  const f = q.data;
  return (
    <>
      <section className="card analytics-block" aria-labelledby="onboarding-h">
        <h2 id="onboarding-h">{t('Onboarding checklist')}</h2>
        <ErrorLine error={q.error} />
        {!f && !q.error && <Loading />}
        {f && (
          <>
            <div className="stats">
              <Stat label={t('Started')} value={number(f.started_users)} />
              <Stat
                label={t('Completed')}
                value={number(f.completed_users)}
                hint={`${ratioPct(f.completion_rate)} %`}
              />
              <Stat
                label={t('Time to complete (median / p90)')}
                value={`${formatMs(f.duration_p50_ms, units)} / ${formatMs(f.duration_p90_ms, units)}`}
              />
              <Stat
                label={t('Time to first step (median)')}
                value={formatMs(f.ttfc_p50_ms, units)}
                hint={tn('{n} user', '{n} users', f.ttfc_sample_size)}
              />
            </div>
            <HBarChart
              caption={t('Checklist steps completed by users who started it')}
              labelHeader={t('Step')}
              headers={[t('Completed'), t('% of started'), t('Skipped')]}
              rows={f.per_step.map((s) => ({
                key: s.step,
                label: t(STEP_LABELS[s.step] ?? s.step),
                width: Math.min(100, pct(s.completed, f.started_users)),
                cells: [number(s.completed), `${pct(s.completed, f.started_users)} %`, number(s.skipped)],
              }))}
            />
          </>
        )}
      </section>
      <section className="card analytics-block" aria-labelledby="wizard-h">
        <h2 id="wizard-h">{t('Setup wizard')}</h2>
        <ErrorLine error={w.error} />
        {!w.data && !w.error && <Loading />}
        {w.data && (
          <>
            <div className="stats">
              <Stat label={t('Starts')} value={number(w.data.starts)} />
              <Stat
                label={t('Completions')}
                value={number(w.data.completions)}
                hint={`${ratioPct(w.data.success_rate)} %`}
              />
              <Stat label={t('Abandons')} value={number(w.data.abandons)} />
              <Stat
                label={t('Average time of a completed run')}
                value={formatMs(w.data.avg_duration_ms_completed, units)}
                hint={
                  w.data.avg_attempts_completed == null
                    ? undefined
                    : t('{n} attempts on average', { n: w.data.avg_attempts_completed.toFixed(1) })
                }
              />
            </div>
            <HBarChart
              caption={t('Wizard events by action')}
              labelHeader={t('Action')}
              headers={[t('Events')]}
              rows={countBars(w.data.by_action).map((b) => ({
                key: b.label,
                label: <code>{b.label}</code>,
                width: b.width,
                cells: [number(b.value)],
              }))}
            />
          </>
        )}
      </section>
    </>
  );
}
