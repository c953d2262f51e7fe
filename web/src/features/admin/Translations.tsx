import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { translationStatsQuery, translationsQuery, useReviewTranslation } from './api';
import { msg, useI18n } from '../../i18n';
import { ErrorLine, Loading, Select } from '../../ui';

const STATUSES = [
  { value: 'open', label: msg('Open') },
  { value: 'accepted', label: msg('Accepted') },
  { value: 'rejected', label: msg('Rejected') },
  { value: 'all', label: msg('All') },
] as const;
const LOCALES = ['uk', 'de', 'es', 'fr', 'pl', 'pt-BR', 'ru'] as const;
type Status = (typeof STATUSES)[number]['value'];
type LocaleCode = (typeof LOCALES)[number];

/** Translation suggestions by status and language, with counts, accept and reject. */
export function Translations() {
  const { t, date, number } = useI18n();
  const [status, setStatus] = useState<Status>('open');
  const [locale, setLocale] = useState<LocaleCode | ''>('');
  const [done, setDone] = useState('');
  const list = useQuery(translationsQuery(status, locale));
  const stats = useQuery(translationStatsQuery());
  const review = useReviewTranslation({
    onSuccess: (patched) =>
      setDone(
        patched === null
          ? t('Rejected.')
          : patched
            ? t('Accepted; the catalog is updated.')
            : t('Accepted; no catalog holds this text.'),
      ),
  });
  return (
    <section aria-labelledby="translations-h">
      <h2 id="translations-h">{t('Translation suggestions')}</h2>
      <ErrorLine error={stats.error} />
      {stats.data && stats.data.stats.length > 0 && (
        <div className="chart-wrap">
          <table className="table">
            <caption className="sr-only">{t('Suggestions per language')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('Language')}</th>
                <th scope="col" className="num">
                  {t('Open')}
                </th>
                <th scope="col" className="num">
                  {t('Wrong, open')}
                </th>
                <th scope="col" className="num">
                  {t('Accepted')}
                </th>
                <th scope="col" className="num">
                  {t('Rejected')}
                </th>
                <th scope="col" className="num">
                  {t('Total')}
                </th>
              </tr>
            </thead>
            <tbody>
              {stats.data.stats.map((s) => (
                <tr key={s.locale}>
                  <th scope="row">{s.locale}</th>
                  <td className="num">{number(s.open_count)}</td>
                  <td className="num">{number(s.critical_open)}</td>
                  <td className="num">{number(s.accepted)}</td>
                  <td className="num">{number(s.rejected)}</td>
                  <td className="num">{number(s.total)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div className="controls">
        <Select
          label={t('Status')}
          value={status}
          onChange={(v) => setStatus(v as Status)}
          options={STATUSES.map((s) => ({ value: s.value, label: t(s.label) }))}
        />
        <Select
          label={t('Language')}
          value={locale}
          onChange={(v) => setLocale(v as LocaleCode | '')}
          options={[{ value: '', label: t('All languages') }, ...LOCALES.map((l) => ({ value: l, label: l }))]}
        />
      </div>
      <ErrorLine error={list.error ?? review.error} />
      {done && (
        <p role="status" className="ok">
          {done}
        </p>
      )}
      {!list.data && !list.error && <Loading />}
      {list.data?.items.length === 0 && <p className="muted">{t('No suggestions.')}</p>}
      <ul className="list translations">
        {list.data?.items.map((s) => (
          <li key={s.id}>
            <div>
              <span className="badge">{s.locale}</span>
              <span className="badge">{s.severity}</span>
              <span className="badge">{s.status}</span> <span className="muted">{date(s.created_at)}</span>
            </div>
            <dl className="tr-diff">
              <dt>{t('Text')}</dt>
              <dd>{s.msgid}</dd>
              <dt>{t('Now')}</dt>
              <dd>{s.current_translation ?? '—'}</dd>
              <dt>{t('Suggested')}</dt>
              <dd>
                <strong>{s.suggestion}</strong>
              </dd>
              {s.page_url && (
                <>
                  <dt>{t('Page')}</dt>
                  <dd className="muted">{s.page_url}</dd>
                </>
              )}
              {s.reviewed_by && (
                <>
                  <dt>{t('Reviewed')}</dt>
                  <dd className="muted">
                    {s.reviewed_by} · {date(s.reviewed_at)} {s.note ?? ''}
                  </dd>
                </>
              )}
            </dl>
            {s.status === 'open' && (
              <div className="actions">
                <button
                  type="button"
                  className="primary"
                  disabled={review.isPending}
                  onClick={() => review.mutate({ id: s.id, accept: true })}
                  aria-label={t('Accept the suggestion “{text}”', { text: s.suggestion })}
                >
                  {t('Accept')}
                </button>
                <button
                  type="button"
                  disabled={review.isPending}
                  onClick={() => review.mutate({ id: s.id, accept: false })}
                  aria-label={t('Reject the suggestion “{text}”', { text: s.suggestion })}
                >
                  {t('Reject')}
                </button>
              </div>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
