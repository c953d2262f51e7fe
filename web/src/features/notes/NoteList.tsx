import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useI18n } from '../../i18n';
import { ConfirmDialog, ErrorLine, Field, Loading, TextArea } from '../../ui';
import { notesQuery, useCreateNote, useDeleteNote } from './api';

/** The notes list with a delete per note, and the form creating one (which then opens it). */
export function NoteList({ project, onOpen }: { project: string; onOpen: (id: number) => void }) {
  const { t, tn, date } = useI18n();
  const [title, setTitle] = useState('');
  const [description, setDescription] = useState('');
  const [deleting, setDeleting] = useState<{ id: number; title: string } | null>(null);
  const notes = useQuery(notesQuery(project));
  const create = useCreateNote(project, {
    onSuccess: (data) => {
      setTitle('');
      setDescription('');
      onOpen(data.id);
    },
  });
  const remove = useDeleteNote(project, { onSuccess: () => setDeleting(null) });
  return (
    <div className="notes split">
      <div>
        <h2>{t('Research notes')}</h2>
        <ErrorLine error={notes.error} />
        {notes.isPending ? (
          <Loading />
        ) : notes.data?.length ? (
          <ul className="list note-list">
            {notes.data.map((n) => (
              <li key={n.id}>
                <button type="button" className="link" onClick={() => onOpen(n.id)}>
                  {n.title}
                </button>{' '}
                <span className="muted">
                  {tn('{n} source', '{n} sources', n.source_count)} · {date(n.created_at)}
                </span>
                {n.description && <p className="muted clip">{n.description}</p>}
                <button
                  type="button"
                  className="danger"
                  aria-label={t('Delete the note {title}', { title: n.title })}
                  onClick={() => setDeleting({ id: n.id, title: n.title })}
                >
                  {t('Delete')}
                </button>
              </li>
            ))}
          </ul>
        ) : (
          <p className="muted">{t('No notes yet: create one to collect sources and ask about them.')}</p>
        )}
      </div>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate({
            title: title.trim(),
            ...(description.trim() ? { description: description.trim() } : {}),
          });
        }}
      >
        <h2>{t('New note')}</h2>
        <Field label={t('Title')} required maxLength={300} value={title} onChange={(e) => setTitle(e.target.value)} />
        <TextArea
          label={t('Description')}
          rows={3}
          maxLength={20000}
          value={description}
          onChange={(e) => setDescription(e.target.value)}
        />
        <ErrorLine error={create.error} />
        <button type="submit" className="primary" disabled={create.isPending || !title.trim()}>
          {t('Create note')}
        </button>
      </form>
      <ConfirmDialog
        open={!!deleting}
        title={t('Delete the note?')}
        busy={remove.isPending}
        onCancel={() => setDeleting(null)}
        onConfirm={() => deleting && remove.mutate(deleting.id)}
        error={remove.error}
      >
        <p>
          {t('“{title}” goes with its sources, chat and issue links. The issues themselves stay.', {
            title: deleting?.title ?? '',
          })}
        </p>
      </ConfirmDialog>
    </div>
  );
}
