import { useI18n } from '../../i18n';
import { BetaWaitlist } from '../../features/admin/BetaWaitlist';
import { CloudWaitlist } from '../../features/admin/CloudWaitlist';

/** The beta waitlist (approve / reject) and the cloud waitlist with its counts (invite: plan cloud). */
export default function Waitlist() {
  const { t } = useI18n();
  return (
    <div>
      <h2>{t('Beta waitlist')}</h2>
      <BetaWaitlist />
      <h2>{t('Cloud waitlist')}</h2>
      <CloudWaitlist />
    </div>
  );
}
