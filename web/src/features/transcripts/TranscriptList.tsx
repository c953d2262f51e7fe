import { useInfiniteQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { useI18n } from '../../i18n';
import { ErrorLine, Loading } from '../../ui';
import { transcriptsQuery } from './api';
import { STATUS_LABELS } from './transcriptSteps';

/** The transcripts, newest first, with their status and TL;DR; more on request. */
export function TranscriptList({ project }: { project: string }) {
  const { t, date } = useI18n();
  const list = useInfiniteQuery(transcriptsQuery(project));
  if (list.isPending) return <Loading />;
  if (list.isError) return <ErrorLine error={list.error} />;
  const items = list.data.pages.flatMap((p) => p.items);
  return (
    <section aria-labelledby="tr-list">
      <h2 id="tr-list">{t('Transcripts')}</h2>
      {items.length === 0 ? (
        <p className="muted">{t('No transcripts yet. Upload a meeting recording above.')}</p>
      ) : (
        <ul className="list tr-list">
          {items.map((i) => (
            <li key={i.transcript_id}>
              <Link to={`?id=${i.transcript_id}`}>{i.filename}</Link>{' '}
              <span className={`badge tr-status ${i.status}`}>{t(STATUS_LABELS[i.status] ?? i.status)}</span>
              <span className="muted">
                {' '}
                · {i.kind === 'video' ? t('Video') : t('Audio')} ·{' '}
                <time dateTime={i.created_at}>{date(i.created_at)}</time>
              </span>
              {i.tldr && <p className="tr-tldr">{i.tldr}</p>}
              {i.status === 'failed' && i.error && <p className="error">{i.error}</p>}
            </li>
          ))}
        </ul>
      )}
      {list.hasNextPage && (
        <button type="button" onClick={() => void list.fetchNextPage()} disabled={list.isFetchingNextPage}>
          {t('Show more')}
        </button>
      )}
    </section>
  );
}
