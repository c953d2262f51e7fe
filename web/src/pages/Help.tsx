import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { askHelp, helpUsageQuery } from '../features/help/api';
import { useI18n } from '../i18n';
import { ErrorLine, PageTitle, TextArea } from '../ui';

/** The help assistant: questions answered from the user guide, with the daily allowance left. */
export default function Help() {
  const { t } = useI18n();
  const [message, setMessage] = useState('');
  const [log, setLog] = useState<{ role: 'user' | 'assistant'; text: string }[]>([]);
  const usage = useQuery(helpUsageQuery());
  const ask = useMutation({
    mutationFn: (q: string) => askHelp(q, log.slice(-10)),
    onSuccess: (r, q) => {
      setLog((l) => [...l, { role: 'user', text: q }, { role: 'assistant', text: r.reply }]);
      setMessage('');
      usage.refetch();
    },
  });
  return (
    <section className="narrow">
      <PageTitle>{t('Help')}</PageTitle>
      <ol className="transcript" aria-live="polite">
        {log.map((l, i) => (
          <li key={i} className={`msg ${l.role}`}>
            <span className="who">{l.role === 'user' ? t('You') : t('Assistant')}</span>
            <div className="text">{l.text}</div>
          </li>
        ))}
      </ol>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          ask.mutate(message);
        }}
      >
        <TextArea
          label={t('Your question')}
          required
          maxLength={2000}
          value={message}
          onChange={(e) => setMessage(e.target.value)}
        />
        <ErrorLine error={ask.error} />
        <button type="submit" className="primary" disabled={ask.isPending}>
          {t('Ask')}
        </button>
      </form>
      {usage.data && (
        <p className="muted">
          {t('{remaining} of {limit} questions left today', {
            remaining: usage.data.remaining,
            limit: usage.data.limit,
          })}
        </p>
      )}
    </section>
  );
}
