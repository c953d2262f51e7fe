import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, must } from '../../api/client';
import { useI18n } from '../../i18n';
import { ErrorLine, Loading } from '../../ui';
import type { TabProps } from './Project';

/** Run history: newest first, refreshed while any run is queued or running; cancel and retry. */
export default function Runs({ project }: TabProps) {
  const { t, date } = useI18n();
  const qc = useQueryClient();
  const runs = useQuery({
    queryKey: ['runs', project],
    queryFn: () =>
      must(api.GET('/api/crm/projects/{name}/runs', { params: { path: { name: project }, query: { limit: 50 } } })),
    refetchInterval: (q) =>
      q.state.data?.runs.some((r) => r.status === 'queued' || r.status === 'running') ? 2000 : false,
  });
  const refresh = () => qc.invalidateQueries({ queryKey: ['runs', project] });
  const cancel = useMutation({
    mutationFn: (id: number) =>
      must(api.POST('/api/crm/projects/{name}/runs/{id}/cancel', { params: { path: { name: project, id } } })),
    onSuccess: refresh,
  });
  const retry = useMutation({
    mutationFn: (id: number) =>
      must(api.POST('/api/crm/projects/{name}/runs/{id}/retry', { params: { path: { name: project, id } } })),
    onSuccess: refresh,
  });
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
                {(r.status === 'queued' || r.status === 'running') && (
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
