import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { outboxQuery, type OutboxFilter } from '../../features/admin/api';
import { msg, useI18n } from '../../i18n';
import { ErrorLine, Loading, Select } from '../../ui';

const STATUS_LABELS: Record<string, string> = {
  kept: msg('Kept (no mail transport)'),
  sent: msg('Sent'),
  retrying: msg('Retrying'),
  failed: msg('Failed'),
};

/**
 * The e-mail outbox: every transactional e-mail with its status and text. Without a mail transport (no SMTP, no
 * e-mail API key) the e-mails are kept here, so the admin can pass a verification or reset link on by hand.
 */
export default function Outbox() {
  const { t, date } = useI18n();
  const [status, setStatus] = useState<OutboxFilter>('');
  const outbox = useQuery(outboxQuery(status));
  return (
    <div>
      <p className="muted">
        {t('Without a mail transport the e-mails are kept here: open one to pass its link on to the person by hand.')}
      </p>
      <Select
        label={t('Status')}
        value={status}
        onChange={(v) => setStatus(v as OutboxFilter)}
        options={[
          { value: '', label: t('All') },
          ...Object.entries(STATUS_LABELS).map(([value, label]) => ({ value, label: t(label) })),
        ]}
      />
      {outbox.isPending && <Loading />}
      <ErrorLine error={outbox.error} />
      {outbox.data?.items.length === 0 && <p>{t('No e-mails.')}</p>}
      <ul className="list outbox">
        {outbox.data?.items.map((m) => (
          <li key={m.id}>
            <details>
              <summary>
                <strong>{m.subject}</strong> · {m.to} ·{' '}
                <span className={`badge ${m.status}`}>{t(STATUS_LABELS[m.status] ?? m.status)}</span> ·{' '}
                <time dateTime={m.created_at}>{date(m.created_at)}</time>
              </summary>
              <pre className="pre mail-text">{m.text}</pre>
              {m.error && <p className="error">{m.error}</p>}
            </details>
          </li>
        ))}
      </ul>
    </div>
  );
}
