import type { ComponentProps } from 'react';
import { Modal } from './Modal';

/** A dialog sliding in from the right edge (full width on a phone), headed by `title`, with a close button. */
export function Drawer(props: Omit<ComponentProps<typeof Modal>, 'variant'>) {
  return <Modal {...props} variant="drawer" />;
}
