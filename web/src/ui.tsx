/**
 * Small shared pieces: labelled fields, buttons, the error line, the dialog (Radix), the confirm dialog (the one
 * yes/no question before a destructive step), a page title.
 */
import * as Dialog from '@radix-ui/react-dialog';
import { useEffect, useId, useRef, type InputHTMLAttributes, type ReactNode, type TextareaHTMLAttributes } from 'react';
import { ApiFailure } from './api/client';
import { useI18n } from './i18n';
import { VoiceButton } from './voice';

export function Field({
  label,
  hint,
  ...props
}: InputHTMLAttributes<HTMLInputElement> & { label: string; hint?: string }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} {...props} aria-describedby={hint ? `${id}-hint` : undefined} />
      {hint && (
        <small id={`${id}-hint`} className="hint">
          {hint}
        </small>
      )}
    </div>
  );
}

/** A labelled multi-line field that offers voice dictation (inserted at the caret). */
export function TextArea({ label, ...props }: TextareaHTMLAttributes<HTMLTextAreaElement> & { label: string }) {
  const id = useId();
  const ref = useRef<HTMLTextAreaElement>(null);
  return (
    <div className="field">
      <div className="field-head">
        <label htmlFor={id} id={`${id}-label`}>
          {label}
        </label>
        <VoiceButton target={ref} describedBy={`${id}-label`} />
      </div>
      <textarea id={id} ref={ref} {...props} />
    </div>
  );
}

export function Select({
  label,
  value,
  onChange,
  options,
}: {
  label: string;
  value: string;
  onChange: (v: string) => void;
  options: { value: string; label: string }[];
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}

/** The message of an error for the user: the envelope's sentence, or a generic one. */
export function ErrorLine({ error }: { error: unknown }) {
  const { t } = useI18n();
  if (!error) return null;
  const text =
    error instanceof ApiFailure ? error.message : t('Something went wrong. Check your connection and try again.');
  return (
    <p role="alert" className="error">
      {text}
    </p>
  );
}

export function PageTitle({ children, actions }: { children: ReactNode; actions?: ReactNode }) {
  useEffect(() => {
    if (typeof children === 'string') document.title = `${children} · CRM`;
  }, [children]);
  return (
    <div className="page-title">
      <h1>{children}</h1>
      {actions && <div className="actions">{actions}</div>}
    </div>
  );
}

export function Modal({
  open,
  onOpenChange,
  title,
  children,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  title: string;
  children: ReactNode;
}) {
  const { t } = useI18n();
  return (
    <Dialog.Root open={open} onOpenChange={onOpenChange}>
      <Dialog.Portal>
        <Dialog.Overlay className="overlay" />
        <Dialog.Content className="dialog" aria-describedby={undefined}>
          <Dialog.Title>{title}</Dialog.Title>
          {children}
          <Dialog.Close className="close" aria-label={t('Close')}>
            ×
          </Dialog.Close>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}

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

export function Loading() {
  const { t } = useI18n();
  return (
    <p className="muted" aria-live="polite">
      {t('Loading…')}
    </p>
  );
}
