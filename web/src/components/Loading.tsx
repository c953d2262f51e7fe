import { useI18n } from '../i18n';

/** The polite "Loading…" line. */
export function Loading() {
  const { t } = useI18n();
  return (
    <p className="muted" aria-live="polite">
      {t('Loading…')}
    </p>
  );
}
