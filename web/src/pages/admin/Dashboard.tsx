import { useQuery } from '@tanstack/react-query';
import { dashboardQuery } from '../../features/admin/api';
import { useI18n } from '../../i18n';
import { ErrorLine, Loading } from '../../ui';
import { HBarChart } from '../../features/admin/charts/HBarChart';
import { Stat } from '../../features/admin/charts/Stat';
import { countBars, formatBytes, pct } from '../../features/admin/charts/charts';

/** The admin dashboard (`GET /api/crm/admin/dashboard`): host figures, users, containers, waitlists, events. */
export default function Dashboard() {
  const { t, tn, number, date } = useI18n();
  const q = useQuery(dashboardQuery());
  if (q.error) return <ErrorLine error={q.error} />;
  if (!q.data) return <Loading />;
  const d = q.data;
  const memUsed = d.memory.total_bytes - d.memory.free_bytes;
  // A `total` key is the sum of the others, not a bar of its own.
  const counts = (c: Record<string, number>) =>
    countBars(Object.fromEntries(Object.entries(c).filter(([k]) => k !== 'total'))).map((b) => ({
      key: b.label,
      label: b.label,
      width: b.width,
      cells: [number(b.value)],
    }));
  return (
    <div className="admin-dash">
      <h2>{t('Server')}</h2>
      <div className="stats">
        <Stat
          label={t('CPU load (1, 5, 15 min)')}
          value={d.cpu.load_avg.map((l) => l.toFixed(2)).join(' · ')}
          hint={tn('{n} core', '{n} cores', d.cpu.cores)}
        />
        <Stat
          label={t('Memory used')}
          value={`${pct(memUsed, d.memory.total_bytes)} %`}
          hint={t('{used} of {total}; the service: {rss}', {
            used: formatBytes(memUsed),
            total: formatBytes(d.memory.total_bytes),
            rss: formatBytes(d.memory.process_rss_bytes),
          })}
        />
        <Stat
          label={t('Disk used')}
          value={d.disk ? `${d.disk.used_pct} %` : '—'}
          hint={
            d.disk
              ? t('{free} free of {total}', {
                  free: formatBytes(d.disk.free_bytes),
                  total: formatBytes(d.disk.total_bytes),
                })
              : t('Not known on this system')
          }
        />
        <Stat label={t('Agent runs')} value={t('{running} running, {queued} queued', d.runs)} />
      </div>

      <h2>{t('Users, projects and issues')}</h2>
      <div className="stats">
        <Stat
          label={t('Users')}
          value={number(d.users.total)}
          hint={tn('{n} new in 7 days', '{n} new in 7 days', d.users.new_7d)}
        />
        <Stat
          label={t('Projects')}
          value={number(d.projects.total)}
          hint={tn('{n} new in 7 days', '{n} new in 7 days', d.projects.new_7d)}
        />
        <Stat label={t('Workers')} value={number(d.projects.workers)} />
        <Stat label={t('Issues')} value={number(d.issues.total)} />
      </div>
      <div className="chart-grid">
        <HBarChart
          caption={t('Users per plan')}
          labelHeader={t('Plan')}
          headers={[t('Users')]}
          rows={counts(d.users.per_plan)}
        />
        <HBarChart
          caption={t('Issues per status')}
          labelHeader={t('Status')}
          headers={[t('Issues')]}
          rows={counts(d.issues.per_status)}
        />
        <HBarChart
          caption={t('Container fleet')}
          labelHeader={t('Status')}
          headers={[t('Containers')]}
          rows={counts(d.containers)}
        />
        <HBarChart
          caption={t('Beta waitlist')}
          labelHeader={t('Status')}
          headers={[t('Entries')]}
          rows={counts(d.waitlist.beta)}
        />
        <HBarChart
          caption={t('Cloud waitlist')}
          labelHeader={t('Status')}
          headers={[t('Entries')]}
          rows={counts(d.waitlist.cloud)}
        />
      </div>

      <h2>{t('Recent activity')}</h2>
      <div className="chart-wrap wide-table">
        <table className="table">
          <caption className="sr-only">{t('The last 50 activity events')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('When')}</th>
              <th scope="col">{t('Event')}</th>
              <th scope="col">{t('Who')}</th>
              <th scope="col">{t('Title')}</th>
            </tr>
          </thead>
          <tbody>
            {d.recent_events.length === 0 && (
              <tr>
                <td colSpan={4} className="muted">
                  {t('No events yet.')}
                </td>
              </tr>
            )}
            {d.recent_events.map((e) => (
              <tr key={e.id}>
                <td className="nowrap">{date(e.created_at)}</td>
                <td>
                  <code>{e.type}</code>
                </td>
                <td>{e.actor ?? '—'}</td>
                <td>{e.title ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
