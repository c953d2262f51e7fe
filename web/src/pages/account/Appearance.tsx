import { useSyncExternalStore } from 'react';
import { msg, useI18n } from '../../i18n';
import { setTheme, storedTheme, subscribeTheme, type ThemeChoice } from '../../theme';
import { Monitor, Moon, Sun, type LucideIcon } from 'lucide-react';
import { icon } from '../../components/icon';

const OPTIONS: [ThemeChoice, string, LucideIcon][] = [
  ['system', msg('As the system'), Monitor],
  ['light', msg('Light'), Sun],
  ['dark', msg('Dark'), Moon],
];

/** The colour theme choice of the settings tab: as the system, light or dark (kept in this browser). */
export function Appearance() {
  const { t } = useI18n();
  const choice = useSyncExternalStore(subscribeTheme, storedTheme, () => 'system' as const);
  return (
    <fieldset className="theme-choice">
      <legend>{t('Theme')}</legend>
      {OPTIONS.map(([value, label, Icon]) => (
        <label key={value} className="radio">
          <input type="radio" name="theme" value={value} checked={choice === value} onChange={() => setTheme(value)} />
          <Icon {...icon} />
          {t(label)}
        </label>
      ))}
      <p className="hint">{t('Kept in this browser.')}</p>
    </fieldset>
  );
}
