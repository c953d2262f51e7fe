import { useQuery } from '@tanstack/react-query';
import { useDecideWaitlist, waitlistQuery } from './api';
import { useI18n } from '../../i18n';
import { ErrorLine } from '../../ui';

/** The beta waitlist: applications with approve and reject. */
export function BetaWaitlist() {
  const { t, date } = useI18n();
  const list = useQuery(waitlistQuery());
  const decide = useDecideWaitlist();
  return (
    <div>
      <ErrorLine error={list.error ?? decide.error} />
      <ul className="list">
        {list.data?.entries.map((w) => (
          <li key={w.id}>
            {w.email} <span className="badge">{w.status}</span> <span className="muted">{date(w.created_at)}</span>
            {w.message && <p className="muted">{w.message}</p>}
            {w.status === 'pending' && (
              <>
                <button type="button" onClick={() => decide.mutate({ id: w.id, ok: true })}>
                  {t('Approve')}
                </button>
                <button type="button" onClick={() => decide.mutate({ id: w.id, ok: false })}>
                  {t('Reject')}
                </button>
              </>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}
