import { useEffect, useState } from 'react';
import { useI18n } from '../../i18n';
import { ConfirmDialog, ErrorLine, Field, Modal } from '../../ui';
import { useDeleteSource, useRenameSource } from './api';
import { followProgress } from './notesTransfer';
import { formatBytes } from './notesUpload';
import { SourceText } from './SourceText';
import { STATUS_LABELS, TYPE_LABELS, type Source } from './types';

/** One source: type, name, size, status (followed live while processing), rename, delete, its text. */
export function SourceRow({
  project,
  noteId,
  source: s,
  follow,
  onChanged,
}: {
  project: string;
  noteId: number;
  source: Source;
  /** Follow its processing live (queued or processing, and among the few followed at once). */
  follow: boolean;
  onChanged: () => void;
}) {
  const { t, date, number } = useI18n();
  const [step, setStep] = useState<string | null>(null);
  const [renaming, setRenaming] = useState(false);
  const [name, setName] = useState('');
  const [deleting, setDeleting] = useState(false);
  const [reading, setReading] = useState(false);
  const pending = s.status === 'queued' || s.status === 'processing';
  useEffect(() => {
    if (!follow) return;
    const abort = new AbortController();
    followProgress(project, noteId, s.id, (p) => setStep(p.message), abort.signal)
      .catch(() => {})
      .finally(() => {
        if (!abort.signal.aborted) onChanged();
      });
    return () => abort.abort();
  }, [follow, project, noteId, s.id]);
  const rename = useRenameSource(project, noteId, s.id, { onSuccess: () => setRenaming(false) });
  const remove = useDeleteSource(project, noteId, s.id, { onSuccess: () => setDeleting(false) });
  return (
    <li className="note-source" data-source={s.id}>
      <div>
        <strong>{s.title}</strong>{' '}
        <span className={`badge src-${s.status}`} data-status={s.status}>
          {t(STATUS_LABELS[s.status])}
        </span>
      </div>
      <p className="muted">
        {t(TYPE_LABELS[s.source_type])}
        {s.size_bytes != null && ` · ${formatBytes(s.size_bytes)}`}
        {s.duration_seconds != null && ` · ${t('{n} s', { n: s.duration_seconds })}`}
        {' · '}
        {date(s.created_at)}
        {s.url && (
          <>
            {' · '}
            <a href={s.url} target="_blank" rel="noreferrer noopener">
              {t('address')}
            </a>
          </>
        )}
      </p>
      {pending && step && (
        <p className="muted" aria-live="polite">
          {step}
        </p>
      )}
      {s.status === 'error' && s.error && <p className="error">{s.error}</p>}
      {s.status === 'done' && s.index_partial && (
        <p className="muted" data-testid="index-partial">
          {t('Searched in part: the first {n} characters are indexed; answers do not see the rest.', {
            n: number(s.indexed_chars ?? 0),
          })}
        </p>
      )}
      <div className="actions">
        {s.status === 'done' && s.content_text != null && (
          <button type="button" onClick={() => setReading(true)}>
            {t('Show text')}
          </button>
        )}
        <button
          type="button"
          aria-expanded={renaming}
          onClick={() => {
            setName(s.title);
            setRenaming((r) => !r);
          }}
        >
          {t('Rename')}
        </button>
        <button
          type="button"
          className="danger"
          aria-label={t('Delete the source {title}', { title: s.title })}
          onClick={() => setDeleting(true)}
        >
          {t('Delete')}
        </button>
      </div>
      {renaming && (
        <form
          className="inline"
          onSubmit={(e) => {
            e.preventDefault();
            rename.mutate(name.trim() || null);
          }}
        >
          <Field
            label={t('New name')}
            hint={t('Leave empty for the default name.')}
            maxLength={200}
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
          <button type="submit" className="primary" disabled={rename.isPending}>
            {t('Save')}
          </button>
          <ErrorLine error={rename.error} />
        </form>
      )}
      <Modal open={reading} onOpenChange={setReading} title={s.title}>
        {reading && <SourceText title={s.title} text={s.content_text ?? ''} />}
      </Modal>
      <ConfirmDialog
        open={deleting}
        title={t('Delete the source?')}
        busy={remove.isPending}
        onCancel={() => setDeleting(false)}
        onConfirm={() => remove.mutate()}
        error={remove.error}
      >
        <p>{t('“{title}” goes with its file and text.', { title: s.title })}</p>
      </ConfirmDialog>
    </li>
  );
}
