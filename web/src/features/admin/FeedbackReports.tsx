import { useQuery } from '@tanstack/react-query';
import { feedbackQuery } from './api';
import { msg, useI18n } from '../../i18n';
import { ErrorLine, Loading } from '../../ui';

const TYPES: Record<string, string> = { bug: msg('Bug'), feature: msg('Feature'), other: msg('Other') };
/** The 100 latest feedback reports. */
export function Reports() {
  const { t, date } = useI18n();
  const q = useQuery(feedbackQuery());
  return (
    <section aria-labelledby="feedback-h">
      <h2 id="feedback-h">{t('Feedback reports')}</h2>
      <ErrorLine error={q.error} />
      {!q.data && !q.error && <Loading />}
      {q.data?.items.length === 0 && <p className="muted">{t('No reports yet.')}</p>}
      <ul className="list feedback">
        {q.data?.items.map((f) => (
          <li key={f.id}>
            <strong>{f.title}</strong>
            <span className="badge">{t(TYPES[f.type] ?? f.type)}</span>{' '}
            <span className="muted">
              {date(f.created_at)} · {f.user_email ?? '—'}
              {f.project ? ` · ${f.project}` : ''}
            </span>
            <p className="pre">{f.description}</p>
            {f.browser && <p className="muted small">{f.browser}</p>}
          </li>
        ))}
      </ul>
    </section>
  );
}
