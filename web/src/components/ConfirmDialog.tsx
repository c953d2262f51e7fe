import { type ReactNode } from 'react';
import { useI18n } from '../i18n';
import { ErrorLine } from './ErrorLine';
import { Modal } from './Modal';

/**
 * The one yes/no dialog before a destructive step (never `window.confirm`): `title` asks, `children` explain,
 * `confirmLabel` (default "Delete") does it, `cancelLabel` (default "Cancel") or closing the dialog calls
 * `onCancel`; `busy` disables the confirm button while the step runs; `error` shows a failure inside.
 */
export function ConfirmDialog({
  open,
  title,
  children,
  confirmLabel,
  cancelLabel,
  onConfirm,
  onCancel,
  busy,
  error,
}: {
  open: boolean;
  title: string;
  children?: ReactNode;
  confirmLabel?: string;
  cancelLabel?: string;
  onConfirm: () => void;
  onCancel: () => void;
  busy?: boolean;
  error?: unknown;
}) {
  const { t } = useI18n();
  return (
    <Modal open={open} onOpenChange={(o) => !o && onCancel()} title={title}>
      {children}
      {error !== undefined && <ErrorLine error={error} />}
      <div className="actions">
        <button type="button" className="danger" onClick={onConfirm} disabled={busy}>
          {confirmLabel ?? t('Delete')}
        </button>
        <button type="button" onClick={onCancel}>
          {cancelLabel ?? t('Cancel')}
        </button>
      </div>
    </Modal>
  );
}
