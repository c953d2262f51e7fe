import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { joinWaitlist } from '../../features/auth/api';
import { useI18n } from '../../i18n';
import { ErrorLine, Field, PageTitle, TextArea } from '../../ui';

export default function Waitlist() {
  const { t } = useI18n();
  const [email, setEmail] = useState('');
  const [message, setMessage] = useState('');
  const apply = useMutation({
    mutationFn: () => joinWaitlist({ email, ...(message ? { message } : {}) }),
  });
  return (
    <section className="narrow">
      <PageTitle>{t('Join the beta waitlist')}</PageTitle>
      {apply.isSuccess ? (
        <p role="status" className="ok">
          {t('Thank you. We will write to you when a place is free.')}
        </p>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            apply.mutate();
          }}
        >
          <Field label={t('E-mail')} type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
          <TextArea
            label={t('What would you use it for? (optional)')}
            maxLength={2000}
            value={message}
            onChange={(e) => setMessage(e.target.value)}
          />
          <ErrorLine error={apply.error} />
          <button type="submit" className="primary" disabled={apply.isPending}>
            {t('Apply')}
          </button>
        </form>
      )}
    </section>
  );
}
