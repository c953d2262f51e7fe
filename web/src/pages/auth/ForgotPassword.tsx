import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { forgotPassword } from '../../features/auth/api';
import { useI18n } from '../../i18n';
import { ErrorLine, Field, PageTitle } from '../../ui';

export default function ForgotPassword() {
  const { t } = useI18n();
  const [email, setEmail] = useState('');
  const send = useMutation({ mutationFn: () => forgotPassword(email) });
  return (
    <section className="narrow">
      <PageTitle>{t('Reset your password')}</PageTitle>
      {send.isSuccess ? (
        <p role="status" className="ok">
          {t('If an account uses this address, an e-mail with a reset link is on its way.')}
        </p>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            send.mutate();
          }}
        >
          <Field label={t('E-mail')} type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
          <ErrorLine error={send.error} />
          <button type="submit" className="primary" disabled={send.isPending}>
            {t('Send the link')}
          </button>
        </form>
      )}
    </section>
  );
}
