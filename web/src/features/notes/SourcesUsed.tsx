import { useI18n } from '../../i18n';
import type { GroundSource } from './notesChat';

/** The sources an answer was grounded in, by title (an answer without citations). */
export function SourcesUsed({ sources }: { sources: GroundSource[] }) {
  const { t } = useI18n();
  if (!sources.length) return null;
  return <p className="muted">{t('Sources: {list}', { list: sources.map((s) => s.title).join(', ') })}</p>;
}
