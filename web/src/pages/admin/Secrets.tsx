import { useQuery } from '@tanstack/react-query';
import { platformSettingsQuery } from '../../features/admin/api';
import { useI18n } from '../../i18n';
import { ErrorLine, Loading } from '../../ui';
import { Setting } from '../../features/admin/Setting';
import { Audit } from '../../features/admin/Audit';

/** Platform secrets (admin): previews, rotation, vendor test, restart, and the append-only audit. */
export default function Secrets() {
  const { t } = useI18n();
  const q = useQuery(platformSettingsQuery());
  return (
    <div>
      <p className="muted">
        {t('Values are never shown: only a preview and the length. Every change, test and restart is audited.')}
      </p>
      <ErrorLine error={q.error} />
      {!q.data && !q.error && <Loading />}
      <ul className="cards secrets">
        {q.data?.items.map((i) => (
          <Setting key={i.name} item={i} />
        ))}
      </ul>
      <Audit />
    </div>
  );
}
