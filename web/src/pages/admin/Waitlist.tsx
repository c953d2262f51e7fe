import { useQuery } from '@tanstack/react-query';
import {
  cloudWaitlistQuery,
  useDecideWaitlist,
  useInviteFromCloudWaitlist,
  waitlistQuery,
} from '../../features/admin/api';
import { useI18n } from '../../i18n';
import { ErrorLine } from '../../ui';

function BetaWaitlist() {
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

function CloudWaitlist() {
  const { t, date, number } = useI18n();
  const list = useQuery(cloudWaitlistQuery());
  const invite = useInviteFromCloudWaitlist();
  const s = list.data?.stats;
  return (
    <div>
      {s && (
        <p className="muted">
          {t('{total} in total: {waiting} waiting, {invited} invited, {activated} activated', {
            total: number(s.total),
            waiting: number(s.waiting),
            invited: number(s.invited),
            activated: number(s.activated),
          })}
        </p>
      )}
      <ErrorLine error={list.error ?? invite.error} />
      {invite.isSuccess && (
        <p role="status" className="ok">
          {t('Invited: the user now has the cloud plan.')}
        </p>
      )}
      {list.data?.list.length === 0 && <p className="muted">{t('Nobody is waiting.')}</p>}
      <ul className="list">
        {list.data?.list.map((w) => (
          <li key={w.user_id}>
            #{w.position} {w.email} <span className="badge">{w.status}</span>{' '}
            <span className="muted">{date(w.joined_at)}</span>
            {w.note && <p className="muted">{w.note}</p>}
            {w.status === 'waiting' && (
              <button
                type="button"
                disabled={invite.isPending}
                onClick={() => invite.mutate(w.user_id)}
                aria-label={t('Invite {email} to the cloud', { email: w.email })}
              >
                {t('Invite')}
              </button>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The beta waitlist (approve / reject) and the cloud waitlist with its counts (invite: plan cloud). */
export default function Waitlist() {
  const { t } = useI18n();
  return (
    <div>
      <h2>{t('Beta waitlist')}</h2>
      <BetaWaitlist />
      <h2>{t('Cloud waitlist')}</h2>
      <CloudWaitlist />
    </div>
  );
}
