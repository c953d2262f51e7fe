import { useQuery } from '@tanstack/react-query';
import { useSetPlan, usersQuery } from '../../features/admin/api';
import { useI18n } from '../../i18n';
import { ErrorLine } from '../../ui';

const PLANS = ['free', 'starter', 'min', 'cloud', 'starter_cloud', 'max', 'beta'] as const;

/** Users with their role, plan (changeable) and verification. */
export default function Users() {
  const { t, date } = useI18n();
  const users = useQuery(usersQuery());
  const plan = useSetPlan();
  return (
    <div>
      <ErrorLine error={users.error ?? plan.error} />
      <div className="chart-wrap">
        <table className="table">
          <thead>
            <tr>
              <th>{t('E-mail')}</th>
              <th>{t('Role')}</th>
              <th>{t('Plan')}</th>
              <th>{t('Verified')}</th>
              <th>{t('Created')}</th>
            </tr>
          </thead>
          <tbody>
            {users.data?.users.map((u) => (
              <tr key={u.id}>
                <td>{u.email}</td>
                <td>{u.role}</td>
                <td>
                  <label className="sr-only" htmlFor={`plan-${u.id}`}>
                    {t('Plan of {email}', { email: u.email })}
                  </label>
                  <select
                    id={`plan-${u.id}`}
                    value={u.plan}
                    onChange={(e) => plan.mutate({ id: u.id, plan: e.target.value as (typeof PLANS)[number] })}
                  >
                    {PLANS.map((p) => (
                      <option key={p}>{p}</option>
                    ))}
                  </select>
                </td>
                <td>{u.email_verified ? '✓' : '—'}</td>
                <td>{date(u.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
