import { useQuery } from '@tanstack/react-query';
import { cloudWaitlistQuery, useInviteFromCloudWaitlist } from './api';
import { useI18n } from '../../i18n';
import { ErrorLine } from '../../ui';

/** The cloud waitlist with its counts; inviting gives the user the cloud plan. */
export function CloudWaitlist() {
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
