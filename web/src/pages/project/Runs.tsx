import { useQuery } from '@tanstack/react-query';
import { runsQuery, useCancelRun, useRetryRun } from '../../features/runs/api';
import { useI18n } from '../../i18n';
import { ErrorLine, Loading } from '../../ui';
import type { TabProps } from '../../features/projects/types';

/** Run history: newest first, refreshed while any run is queued or running; cancel and retry. */
export default function Runs({ project }: TabProps) {
  const { t, date } = useI18n();
  const runs = useQuery(runsQuery(project));
  const cancel = useCancelRun(project);
  const retry = useRetryRun(project);
  if (runs.isPending) return <Loading />;
  return (
    <div>
      <ErrorLine error={runs.error ?? cancel.error ?? retry.error} />
      {!runs.data?.runs.length && <p className="muted">{t('No runs yet.')}</p>}
      <table className="table">
        <thead>
          <tr>
            <th>#</th>
            <th>{t('Worker')}</th>
            <th>{t('Status')}</th>
            <th>{t('Reply')}</th>
            <th>{t('Started')}</th>
            <th>
              <span className="sr-only">{t('Actions')}</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {runs.data?.runs.map((r) => (
            <tr key={r.id}>
              <td>{r.id}</td>
              <td>{r.worker_id}</td>
              <td>
                <span className={`status ${r.status}`}>{r.status}</span>
                {r.error_message && <div className="error">{r.error_message}</div>}
              </td>
              <td className="clip">{r.reply}</td>
              <td>{date(r.created_at)}</td>
              <td>
                {(r.status === 'queued' || r.status === 'running' || r.status === 'waiting_approval') && (
                  <button type="button" onClick={() => cancel.mutate(r.id)}>
                    {t('Cancel')}
                  </button>
                )}
                {(r.status === 'failed' || r.status === 'cancelled') && (
                  <button type="button" onClick={() => retry.mutate(r.id)}>
                    {t('Retry')}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
