import * as Dialog from '@radix-ui/react-dialog';
import { type ReactNode } from 'react';
import { useI18n } from '../i18n';
import { X } from 'lucide-react';
import { icon } from './icon';

/**
 * A Radix dialog with its title and a close button; `onOpenChange(false)` when closed. `variant` `drawer` slides it in
 * from the right edge (full width on a phone).
 */
export function Modal({
  open,
  onOpenChange,
  title,
  children,
  variant = 'dialog',
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  title: string;
  children: ReactNode;
  variant?: 'dialog' | 'drawer';
}) {
  const { t } = useI18n();
  return (
    <Dialog.Root open={open} onOpenChange={onOpenChange}>
      <Dialog.Portal>
        <Dialog.Overlay className="overlay" />
        <Dialog.Content className={variant} aria-describedby={undefined}>
          <Dialog.Title className={variant === 'drawer' ? 'drawer-title' : undefined}>{title}</Dialog.Title>
          {children}
          <Dialog.Close className="close" aria-label={t('Close')}>
            <X {...icon} />
          </Dialog.Close>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
