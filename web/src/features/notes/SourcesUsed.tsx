import { useI18n } from '../../i18n';
import type { GroundSource } from './notesChat';

/** The sources an answer used, as `[S<id>] title`. */
export function SourcesUsed({ sources }: { sources: GroundSource[] }) {
  const { t } = useI18n();
  if (!sources.length) return null;
  return (
    <p className="muted">
      {t('Sources: {list}', { list: sources.map((s) => `[S${s.source_id}] ${s.title}`).join(', ') })}
    </p>
  );
}
