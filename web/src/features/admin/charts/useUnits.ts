/** The duration unit labels of the admin charts in the current language. */
import { useI18n } from '../../../i18n';
import { type DurationUnits } from './charts';

/** The duration unit labels in the current language, for `formatSeconds` / `formatMs`. */
export function useUnits(): DurationUnits & { ms: string } {
  const { t } = useI18n();
  return { d: t('d'), h: t('h'), min: t('min'), s: t('s'), ms: t('ms') };
}
