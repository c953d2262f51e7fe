import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { auditQuery, platformSettingsQuery } from './api';
import { useI18n } from '../../i18n';
import { ErrorLine } from '../../ui';

/** The append-only audit of platform settings, the 100 latest, filterable by setting. */
export function Audit() {
  const { t, date } = useI18n();
  const [key, setKey] = useState('');
  const q = useQuery(auditQuery(key));
  const settings = useQuery(platformSettingsQuery());
  return (
    <section aria-labelledby="audit-h">
      <h2 id="audit-h">{t('Audit')}</h2>
      <div className="field">
        <label htmlFor="audit-key">{t('Setting')}</label>
        <select id="audit-key" value={key} onChange={(e) => setKey(e.target.value)}>
          <option value="">{t('All settings')}</option>
          {settings.data?.items.map((i) => (
            <option key={i.name} value={i.name}>
              {i.name}
            </option>
          ))}
        </select>
      </div>
      <ErrorLine error={q.error} />
      <div className="chart-wrap">
        <table className="table audit">
          <caption className="sr-only">{t('Changes, tests and restarts of platform secrets, newest first')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('When')}</th>
              <th scope="col">{t('Setting')}</th>
              <th scope="col">{t('Action')}</th>
              <th scope="col">{t('Result')}</th>
              <th scope="col">{t('Who')}</th>
              <th scope="col">{t('From')}</th>
            </tr>
          </thead>
          <tbody>
            {q.data?.items.length === 0 && (
              <tr>
                <td colSpan={6} className="muted">
                  {t('No entries yet.')}
                </td>
              </tr>
            )}
            {q.data?.items.map((a) => (
              <tr key={a.id}>
                <td className="nowrap">{date(a.created_at)}</td>
                <td>
                  <code>{a.key_name}</code>
                </td>
                <td>{a.action}</td>
                <td>{a.ok == null ? '—' : a.ok ? t('ok') : t('failed')}</td>
                <td>{a.actor_email ?? '—'}</td>
                <td className="muted">
                  {a.client_ip ?? ''} {a.user_agent ? <span className="clip">{a.user_agent}</span> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
