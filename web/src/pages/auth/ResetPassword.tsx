import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { resetPassword } from '../../features/auth/api';
import { useI18n } from '../../i18n';
import { ErrorLine, Field, PageTitle } from '../../ui';

/** The e-mailed link `/reset-password?token=…`: choose a new password. */
export default function ResetPassword() {
  const { t } = useI18n();
  const [params] = useSearchParams();
  const [password, setPassword] = useState('');
  const reset = useMutation({
    mutationFn: () => resetPassword({ token: params.get('token') ?? '', password }),
  });
  return (
    <section className="narrow">
      <PageTitle>{t('Choose a new password')}</PageTitle>
      {reset.isSuccess ? (
        <p role="status" className="ok">
          {t('Your password is changed.')} <Link to="/login">{t('Sign in')}</Link>
        </p>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            reset.mutate();
          }}
        >
          <Field
            label={t('New password')}
            type="password"
            autoComplete="new-password"
            minLength={8}
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
          <ErrorLine error={reset.error} />
          <button type="submit" className="primary" disabled={reset.isPending}>
            {t('Save the password')}
          </button>
        </form>
      )}
    </section>
  );
}
