import { useQuery } from '@tanstack/react-query';
import { useI18n } from '../../i18n';
import { Loading } from '../../ui';
import { activityQuery } from './api';

/** A worker's recent activity, newest first. */
export function Activity({ project, id }: { project: string; id: number }) {
  const { t, date } = useI18n();
  const a = useQuery(activityQuery(project, id));
  if (a.isPending) return <Loading />;
  if (!a.data?.events.length) return <p className="muted">{t('No activity yet.')}</p>;
  return (
    <ul className="feed">
      {a.data.events.map((e, i) => (
        <li key={i}>
          <time>{date(e.when)}</time> <strong>{e.title}</strong> {e.detail}
        </li>
      ))}
    </ul>
  );
}
