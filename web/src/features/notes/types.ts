/** Types and labels shared by the notes components. */
import type { paths } from '../../api/client';
import { msg } from '../../i18n';

/** A note as `GET …/notes/{id}` answers it. */
export type NoteDetail =
  paths['/api/crm/projects/{name}/notes/{id}']['get']['responses'][200]['content']['application/json'];

/** One source of a note. */
export type Source = NoteDetail['sources'][number];

/** The label of each source type (message ids; translate with `t`). */
export const TYPE_LABELS: Record<Source['source_type'], string> = {
  youtube: msg('YouTube video'),
  web: msg('Web page'),
  video: msg('Video'),
  audio: msg('Audio'),
  pdf: msg('PDF'),
  docx: msg('DOCX'),
  txt: msg('Text'),
  markdown: msg('Markdown'),
  image: msg('Image'),
};

/** The label of each source status (message ids). */
export const STATUS_LABELS: Record<Source['status'], string> = {
  queued: msg('Queued'),
  processing: msg('Processing'),
  done: msg('Done'),
  error: msg('Failed'),
};
