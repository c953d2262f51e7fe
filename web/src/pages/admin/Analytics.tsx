import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import {
  activityQuery,
  cascadeQuery,
  latencyQuery,
  lifecycleQuery,
  onboardingFunnelQuery,
  wipeQuery,
  wizardQuery,
} from '../../features/admin/api';
import { msg, useI18n } from '../../i18n';
import { ErrorLine, Loading, Select } from '../../ui';
import { DailyChart, HBarChart, Stat, useUnits } from './Bars';
import { barWidths, countBars, dailySeries, formatMs, formatSeconds, funnelBars, pct, ratioPct } from './charts';

const STEP_LABELS: Record<string, string> = {
  signup: msg('Signed up'),
  email_verified: msg('E-mail verified'),
  first_project: msg('First project'),
  first_worker: msg('First worker'),
  first_message: msg('First message'),
  first_response: msg('First agent response'),
  return_day2: msg('Came back on day 2'),
  workers: msg('Workers'),
  cli: msg('Command-line client'),
  skill: msg('Skill'),
  bot: msg('Messenger bot'),
  issue: msg('Issue'),
};
const SEGMENTS = [
  { value: 'all', label: msg('Everyone') },
  { value: 'web', label: msg('Web') },
  { value: 'tg', label: msg('Messenger') },
  { value: 'cli', label: msg('Command line') },
];
const STAGES = [
  ['queue_ms', msg('Queue')],
  ['prep_ms', msg('Preparation')],
  ['gen_ms', msg('Generation')],
  ['total_ms', msg('Total')],
] as const;

function WindowSelect({
  label,
  value,
  onChange,
  options,
  unit,
}: {
  label: string;
  value: number;
  onChange: (n: number) => void;
  options: number[];
  unit: 'hours' | 'days';
}) {
  const { t } = useI18n();
  return (
    <Select
      label={label}
      value={String(value)}
      onChange={(v) => onChange(Number(v))}
      options={options.map((n) => ({
        value: String(n),
        label: unit === 'hours' ? t('Last {n} hours', { n }) : t('Last {n} days', { n }),
      }))}
    />
  );
}

function Lifecycle() {
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

function Onboarding({ hours }: { hours: number }) {
  const { t, number } = useI18n();
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
                hint={t('{n} users', { n: number(f.ttfc_sample_size) })}
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

function Activity({ days }: { days: number }) {
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

function Runtime({ days }: { days: number }) {
  const { t, number } = useI18n();
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
            <p className="muted">{t('{n} agent runs', { n: number(lat.data.sampleSize) })}</p>
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
              caption={t('Model calls and tokens by model')}
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

function Wipe({ days }: { days: number }) {
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

/** The admin analytics: funnels, wizard, activity, runtime latency and cascade, wipe metrics, as charts. */
export default function Analytics() {
  const { t } = useI18n();
  const [hours, setHours] = useState(168);
  const [days, setDays] = useState(14);
  return (
    <div className="analytics">
      <Lifecycle />
      <div className="controls">
        <WindowSelect
          label={t('Onboarding and wizard window')}
          value={hours}
          onChange={setHours}
          options={[24, 168, 720]}
          unit="hours"
        />
      </div>
      <Onboarding hours={hours} />
      <div className="controls">
        <WindowSelect
          label={t('Activity, runtime and wipe window')}
          value={days}
          onChange={setDays}
          options={[7, 14, 30, 90]}
          unit="days"
        />
      </div>
      <Activity days={days} />
      <Runtime days={days} />
      <Wipe days={days} />
    </div>
  );
}
