import * as Dialog from '@radix-ui/react-dialog';
import { type ReactNode } from 'react';
import { useI18n } from '../i18n';

/** A Radix dialog sliding in from the right edge (full width on a phone), headed by `title`, with a close button. */
export function Drawer({
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
        <Dialog.Content className="drawer" aria-describedby={undefined}>
          <Dialog.Title className="drawer-title">{title}</Dialog.Title>
          {children}
          <Dialog.Close className="close" aria-label={t('Close')}>
            ×
          </Dialog.Close>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
