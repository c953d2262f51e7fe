import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { login as signIn } from '../../features/auth/api';
import { useI18n } from '../../i18n';
import { session } from '../../session';
import { ErrorLine, Field, PageTitle } from '../../ui';
import { IdpButton } from './IdpButton';

/** Where to go after signing in: a same-site path from `?next=`, else the projects. */
export function safeNext(next: string | null): string {
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/projects';
}

export default function Login() {
  const { t } = useI18n();
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const login = useMutation({
    mutationFn: () => signIn({ email, password }),
    onSuccess: (r) => {
      session.signIn(r.token);
      navigate(safeNext(params.get('next')), { replace: true });
    },
  });
  return (
    <section className="narrow">
      <PageTitle>{t('Sign in')}</PageTitle>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          login.mutate();
        }}
      >
        <Field
          label={t('E-mail')}
          type="email"
          autoComplete="email"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
        />
        <Field
          label={t('Password')}
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        <ErrorLine error={login.error} />
        <button type="submit" className="primary" disabled={login.isPending}>
          {t('Sign in')}
        </button>
      </form>
      <IdpButton redirect={safeNext(params.get('next'))} inviteCode={params.get('code') ?? undefined} />
      <p>
        <Link to="/forgot-password">{t('Forgot your password?')}</Link>
      </p>
      <p>
        {t('No account yet?')} <Link to="/register">{t('Register with an invite code')}</Link> ·{' '}
        <Link to="/waitlist">{t('Join the beta waitlist')}</Link>
      </p>
    </section>
  );
}
