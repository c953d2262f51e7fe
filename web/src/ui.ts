/**
 * The shared pieces of the UI, one component per file under components/ and exported here together: labelled
 * fields (Field, TextArea with dictation, Select), the error line, the page title, the dialog and the side
 * drawer (Radix), the confirm dialog (the one yes/no question before a destructive step) and the loading line.
 */
export { ConfirmDialog } from './components/ConfirmDialog';
export { Drawer } from './components/Drawer';
export { ErrorLine } from './components/ErrorLine';
export { Field } from './components/Field';
export { Loading } from './components/Loading';
export { Modal } from './components/Modal';
export { PageTitle } from './components/PageTitle';
export { Select } from './components/Select';
export { TextArea } from './components/TextArea';
export { Avatar } from './components/Avatar';
export { Markdown } from './components/Markdown';
