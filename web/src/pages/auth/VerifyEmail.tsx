import { useEffect, useRef } from 'react';
import { Link, useSearchParams } from 'react-router';
import { useMe } from '../../auth';
import { useVerifyEmail } from '../../features/auth/api';
import { useI18n } from '../../i18n';
import { ErrorLine, PageTitle } from '../../ui';

/**
 * The e-mailed link `/verify-email?token=…`: confirms the address once, on arrival. Opened again (a reload, a
 * second click) by a signed-in user whose address is already verified, it says so instead of the link's error.
 */
export default function VerifyEmail() {
  const { t } = useI18n();
  const me = useMe();
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const sent = useRef('');
  const verify = useVerifyEmail();
  useEffect(() => {
    if (token && sent.current !== token) {
      sent.current = token;
      verify.mutate(token);
    }
  }, [token, verify]);
  const verified = verify.isSuccess || (verify.isError && me.data?.email_verified);
  return (
    <section className="narrow">
      <PageTitle>{t('Verify e-mail')}</PageTitle>
      {!token && <p role="alert">{t('This link has no token. Open the link from the e-mail again.')}</p>}
      {verify.isPending && <p aria-live="polite">{t('Checking the link…')}</p>}
      {verified ? (
        <p role="status" className="ok">
          {t('Your e-mail address is verified.')} <Link to="/onboarding">{t('Continue')}</Link>
        </p>
      ) : (
        <ErrorLine error={verify.error} />
      )}
    </section>
  );
}
