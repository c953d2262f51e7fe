import { useQuery } from '@tanstack/react-query';
import { trialQuery, usageQuery } from '../../features/account/api';
import { useI18n } from '../../i18n';
import { ErrorLine } from '../../ui';

/** The usage tab: the trial's tokens left, token totals and the latest calls. */
export default function Usage() {
  const { t, number, date } = useI18n();
  const usage = useQuery(usageQuery());
  const trial = useQuery(trialQuery());
  return (
    <div>
      {trial.data && (
        <p>
          {trial.data.has_trial_active
            ? t('Trial: {left} of {granted} tokens left', {
                left: number(trial.data.total_remaining),
                granted: number(trial.data.total_granted),
              })
            : t('No active trial.')}
        </p>
      )}
      {usage.data && (
        <>
          <p>
            {t('Total: {total} tokens ({input} in, {output} out)', {
              total: number(usage.data.totals.total),
              input: number(usage.data.totals.input),
              output: number(usage.data.totals.output),
            })}
          </p>
          <table className="table">
            <thead>
              <tr>
                <th>{t('When')}</th>
                <th>{t('Project')}</th>
                <th>{t('Model')}</th>
                <th>{t('Tokens')}</th>
              </tr>
            </thead>
            <tbody>
              {usage.data.rows.map((r) => (
                <tr key={r.id}>
                  <td>{date(r.created_at)}</td>
                  <td>{r.project_name}</td>
                  <td>{r.model}</td>
                  <td>{number(r.total_tokens)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      <ErrorLine error={usage.error ?? trial.error} />
    </div>
  );
}
