import { useQuery } from '@tanstack/react-query';
import { useI18n } from '../../i18n';
import { runtimeQuery } from './api';

/** Runtime status of one worker, polled every 15 s. */
export function RuntimeStatus({ project, id }: { project: string; id: number }) {
  const { t, number } = useI18n();
  const rt = useQuery(runtimeQuery(project, id));
  if (!rt.data) return null;
  return (
    <span className={`status ${rt.data.status}`}>
      {rt.data.status === 'working' ? t('Working') : t('Idle')}
      {rt.data.current_skill ? ` · ${rt.data.current_skill}` : ''} ·{' '}
      {t('{used} tokens today', { used: number(rt.data.tokens_today) })}
      {rt.data.tokens_cap ? ` / ${number(rt.data.tokens_cap)}` : ''}
      <meter min={0} max={100} value={rt.data.tokens_pct} aria-label={t('Share of the daily cap used')} />
    </span>
  );
}
