import { useEffect, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { useI18n } from '../../i18n';
import { session } from '../../session';
import { PageTitle } from '../../ui';
import { safeNext } from './Login';

/**
 * Where the identity provider's sign-in ends: `#token=…[&redirect=…]` signs in and opens the page asked for (the
 * projects by default); `#error=<code>` says what went wrong. The fragment never reaches the server.
 */
export default function LoginCallback() {
  const { t } = useI18n();
  const navigate = useNavigate();
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const params = new URLSearchParams(window.location.hash.slice(1));
    const token = params.get('token');
    if (token) {
      session.signIn(token);
      navigate(safeNext(params.get('redirect')), { replace: true });
    } else setError(params.get('error') ?? 'unknown');
  }, [navigate]);
  if (!error) return null;
  const text: Record<string, string> = {
    invite_required: t('No account uses this e-mail yet: register with an invite code first.'),
    invalid_invite: t('This invite code is not valid or was already used.'),
    account_not_linked: t(
      'An account with this e-mail exists: sign in with its password and link the provider in your settings.',
    ),
    oidc_flow_stale: t('The sign-in settings changed while you were signing in. Please try again.'),
    idp_unavailable: t('Signing in with the identity provider is not available right now.'),
  };
  return (
    <section className="narrow">
      <PageTitle>{t('Sign in')}</PageTitle>
      <p role="alert" className="error">
        {text[error] ?? t('The sign-in did not succeed ({code}). Please try again.', { code: error })}
      </p>
      <p>
        <Link to="/login">{t('Back to sign in')}</Link> ·{' '}
        <Link to="/register">{t('Register with an invite code')}</Link>
      </p>
    </section>
  );
}
