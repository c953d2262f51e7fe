import { useQuery } from '@tanstack/react-query';
import { useEffect } from 'react';
import { Link, useSearchParams } from 'react-router';
import { ApprovalCard } from '../../features/approvals/ApprovalCard';
import { APPROVAL_STATUS_LABELS, approvalsQuery } from '../../features/approvals/api';
import { workersQuery } from '../../features/workers/api';
import { useI18n } from '../../i18n';
import { ErrorLine, Loading } from '../../ui';
import type { TabProps } from '../../features/projects/types';

/**
 * The project's approvals: the pending ones to decide (refreshed), then the decided ones. `?approval=<id>` (the link
 * of the e-mail that tells the owner of a request) marks that approval and scrolls to it.
 */
export default function Approvals({ project }: TabProps) {
  const { t, date } = useI18n();
  const [params] = useSearchParams();
  const focus = Number(params.get('approval')) || undefined;
  const pending = useQuery(approvalsQuery(project, 'pending'));
  const all = useQuery(approvalsQuery(project));
  const workers = useQuery(workersQuery(project));
  const name = (id: number) => workers.data?.workers.find((w) => w.id === id)?.label ?? t('Worker #{id}', { id });
  const loaded = !pending.isPending && !all.isPending;
  useEffect(() => {
    if (focus && loaded) document.getElementById(`approval-${focus}`)?.scrollIntoView({ block: 'center' });
  }, [focus, loaded]);
  if (pending.isPending) return <Loading />;
  const decided = (all.data?.approvals ?? []).filter((a) => a.status !== 'pending');
  return (
    <div className="approvals">
      <ErrorLine error={pending.error ?? all.error} />
      <h2>{t('Waiting for a decision')}</h2>
      {!pending.data?.approvals.length && <p className="muted">{t('No tool call waits for a decision.')}</p>}
      {pending.data?.approvals.map((a) => (
        <div key={a.id} id={`approval-${a.id}`} className={a.id === focus ? 'approval-focus' : undefined}>
          <ApprovalCard project={project} approval={a} workerName={name(a.worker_id)} />
        </div>
      ))}
      {decided.length > 0 && (
        <>
          <h2>{t('Decided')}</h2>
          <ul className="run-list">
            {decided.map((a) => (
              <li key={a.id} id={`approval-${a.id}`} className={a.id === focus ? 'run-row approval-focus' : 'run-row'}>
                <div className="run-row-head">
                  <code>{a.tool}</code>
                  <span className={`status ${a.status}`}>{t(APPROVAL_STATUS_LABELS[a.status])}</span>
                  <span>{name(a.worker_id)}</span>
                  <Link to={`/projects/${project}/runs/${a.run_id}`}>{t('Run #{id}', { id: a.run_id })}</Link>
                  <span className="muted">
                    {a.decided_by && `${a.decided_by} · `}
                    {date(a.decided_at ?? a.created_at)}
                  </span>
                </div>
                {a.reason && <p className="muted">{a.reason}</p>}
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
