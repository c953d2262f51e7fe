import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { ApiFailure, authHeaders } from '../../api/client';
import { useMe } from '../../auth';
import { eraseAccount } from '../../features/auth/api';
import { useI18n } from '../../i18n';
import { session } from '../../session';
import { ErrorLine, Field } from '../../ui';
import { ERASE_CONFIRMATION } from '../../../../server/src/modules/privacy/privacy.rules.ts';

/** The export and erasure tab: download the JSON export, erase the account (typing the exact text). */
export default function Privacy() {
  const { t } = useI18n();
  const me = useMe();
  const [confirm, setConfirm] = useState('');
  const [exportError, setExportError] = useState<unknown>(null);
  const erase = useMutation({
    mutationFn: () => eraseAccount(confirm),
    onSuccess: () => session.signOut(),
  });
  async function download() {
    setExportError(null);
    const res = await fetch('/api/auth/export', { headers: authHeaders() });
    if (!res.ok) {
      const body = await res.json().catch(() => ({}));
      setExportError(
        new ApiFailure(res.status, { error: body.error ?? `http_${res.status}`, message: body.message ?? '' }),
      );
      return;
    }
    const name = /filename="?([^";]+)/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? 'export.json';
    const url = URL.createObjectURL(await res.blob());
    Object.assign(document.createElement('a'), { href: url, download: name }).click();
    // Revoked a little later: the browser may still be reading the blob when click() returns.
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }
  return (
    <div>
      <h2>{t('Export your data')}</h2>
      <p>{t('A JSON file with your profile, projects, messages, issues, notes and usage.')}</p>
      <button type="button" onClick={() => void download()}>
        {t('Download the export')}
      </button>
      <ErrorLine error={exportError} />
      <h2>{t('Delete your account')}</h2>
      <p>
        {t('This erases {email} and every project you own. It cannot be undone. Type {confirm} to confirm.', {
          email: me.data?.email ?? '',
          confirm: ERASE_CONFIRMATION,
        })}
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          erase.mutate();
        }}
      >
        <Field
          label={t('Confirmation')}
          autoComplete="off"
          value={confirm}
          onChange={(e) => setConfirm(e.target.value)}
        />
        <ErrorLine error={erase.error} />
        <button type="submit" className="danger" disabled={confirm !== ERASE_CONFIRMATION || erase.isPending}>
          {t('Delete my account')}
        </button>
      </form>
    </div>
  );
}
