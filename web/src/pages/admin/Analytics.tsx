import { useState } from 'react';
import { useI18n } from '../../i18n';
import { WindowSelect } from '../../features/admin/analytics/WindowSelect';
import { Lifecycle } from '../../features/admin/analytics/Lifecycle';
import { Onboarding } from '../../features/admin/analytics/OnboardingFunnel';
import { Activity } from '../../features/admin/analytics/ActivityChart';
import { Runtime } from '../../features/admin/analytics/Runtime';
import { Wipe } from '../../features/admin/analytics/Wipe';

/** The admin analytics: funnels, wizard, activity, runtime latency and cascade, wipe metrics, as charts. */
export default function Analytics() {
  const { t } = useI18n();
  const [hours, setHours] = useState(168);
  const [days, setDays] = useState(14);
  return (
    <div className="analytics">
      <Lifecycle />
      <div className="controls">
        <WindowSelect
          label={t('Onboarding and wizard window')}
          value={hours}
          onChange={setHours}
          options={[24, 168, 720]}
          unit="hours"
        />
      </div>
      <Onboarding hours={hours} />
      <div className="controls">
        <WindowSelect
          label={t('Activity, runtime and wipe window')}
          value={days}
          onChange={setDays}
          options={[7, 14, 30, 90]}
          unit="days"
        />
      </div>
      <Activity days={days} />
      <Runtime days={days} />
      <Wipe days={days} />
    </div>
  );
}
