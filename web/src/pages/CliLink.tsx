import { useMutation } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { ApiFailure } from '../api/client';
import { confirmCliLink } from '../features/account/api';
import { useMe } from '../auth';
import { useI18n } from '../i18n';
import { ErrorLine, PageTitle } from '../ui';
import { linkOutcome } from '../features/account/logic';

/**
 * The CLI link page `/cli/link?code=…` that `arc login` opens: shows the code to compare with the terminal, and
 * on the user's word confirms it (`POST /api/crm/cli/link/confirm {code}`), after which the CLI receives its
 * token on its link stream. Shows the outcome: linked, expired (410), already used (409) or unknown code (404).
 */
export default function CliLink() {
  const { t } = useI18n();
  const me = useMe();
  const [params] = useSearchParams();
  const code = (params.get('code') ?? '').trim();
  const confirm = useMutation({ mutationFn: () => confirmCliLink(code) });
  const outcome = linkOutcome(
    code,
    confirm.isSuccess,
    confirm.error instanceof ApiFailure ? confirm.error.status : confirm.error ? 0 : undefined,
  );
  return (
    <section className="narrow">
      <PageTitle>{t('Link the command-line client')}</PageTitle>
      {outcome === 'missing' ? (
        <p role="alert" className="error">
          {t('This link has no code. Run arc login again and open the link it shows.')}
        </p>
      ) : (
        <>
          <p>
            {t('Check that your terminal shows this code:')} <code className="code">{code}</code>
          </p>
          {me.data && <p>{t('The CLI will act as {email}.', { email: me.data.email })}</p>}
          {outcome === 'ready' && (
            <button type="button" className="primary" disabled={confirm.isPending} onClick={() => confirm.mutate()}>
              {t('Yes, link this device')}
            </button>
          )}
          <div role="status" aria-live="polite">
            {outcome === 'linked' && (
              <p className="ok">{t('The CLI is linked. You can go back to your terminal and close this page.')}</p>
            )}
            {outcome === 'expired' && <p className="error">{t('This code has expired. Run arc login again.')}</p>}
            {outcome === 'used' && <p className="error">{t('This code has already been used.')}</p>}
            {outcome === 'invalid' && (
              <p className="error">{t('No device link has this code. Check the link, or run arc login again.')}</p>
            )}
          </div>
          {outcome === 'error' && <ErrorLine error={confirm.error} />}
          {outcome === 'linked' && <Link to="/account?tab=cli">{t('See your devices')}</Link>}
        </>
      )}
    </section>
  );
}
